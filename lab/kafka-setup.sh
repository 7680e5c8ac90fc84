#!/bin/sh
# Fetches the jars of a real Apache Kafka broker (KRaft mode) for the
# integration tests into build/kafka-libs: kafka_2.13 and kafka-tools (without
# connect-runtime) plus slf4j-simple, from Maven Central through Maven's local
# repository (~/.m2), so a second run downloads nothing. Idempotent: quick
# when build/kafka-libs is already complete.
#
#   lab/kafka-setup.sh            fetch if missing; print the lib folder
#   KAFKA_LIBS=/x lab/kafka-setup.sh
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
libs=${KAFKA_LIBS:-$root/build/kafka-libs}
pom=$root/lab/kafka/pom.xml
stamp=$libs/.complete

# The stamp records which pom filled the folder: a new version refetches.
want=$(sha256sum "$pom" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "$libs"
	exit 0
fi
command -v mvn >/dev/null || { echo "kafka-setup: mvn not found (apt-get install maven)" >&2; exit 1; }
command -v java >/dev/null || { echo "kafka-setup: java not found (apt-get install default-jre-headless)" >&2; exit 1; }

rm -rf "$libs.tmp"
mkdir -p "$libs.tmp"
# Runtime jars only; connect-runtime is excluded in the pom.
if ! mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
	-DoutputDirectory="$libs.tmp" >&2; then
	echo "kafka-setup: mvn dependency:copy-dependencies failed (see above)" >&2
	rm -rf "$libs.tmp"
	exit 1
fi
ls "$libs.tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || { echo "kafka-setup: kafka_2.13 jar missing" >&2; exit 1; }
echo "$want" > "$libs.tmp/.complete"
rm -rf "$libs"
mv "$libs.tmp" "$libs"
echo "$libs"
