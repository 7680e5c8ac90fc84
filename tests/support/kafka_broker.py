"""A real Apache Kafka broker for the integration tests: KRaft mode, one node
that is both broker and controller, started from the Maven Central jars that
lab/kafka-setup.sh puts in build/kafka-libs, with -Xmx256m.

    b = KafkaBroker(host="127.0.0.1", auto_create=True, partitions=3)
    b.start()                    # formats storage in a temporary folder
    b.create_topic("t", partitions=3)
    b.stop(signal.SIGKILL)       # by pid
    b.start()                    # same port, same data: a restart
    records = b.consume("t", count=100)
    b.close()                    # stops and removes the folder

Everything it starts it stops by pid; everything it writes is in its own
temporary folder, removed by close(). Read-back is with kcat.

Where it listens: on loopback in the root namespace (the default), or, with
netns=NAME, on an address of that namespace, which the caller created; then
the broker, the topic tool and every kcat run inside NAME. Any other address
in the root namespace is refused: test traffic goes to loopback or to
namespaces the test made, nowhere else.

With relayed=(HOST, PORT) it has a second listener, on relayed_port of its
own address, that advertises HOST:PORT: a relay there (in a namespace the
test made, tests/support/netns_drop.py) to relayed_port carries the
bootstrap and every request after it, as the metadata a broker answers
names the listener the request came by.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import base64
import ipaddress

from support.ports import free_tcp_port
from support.procs import lab_setup, signal_and_reap
from support.reaper import outlives_the_test
JAVA_HEAP = "-Xmx256m"


def kafka_libs():
    """Fetches the jars if missing (idempotent, quick when present); returns the folder."""
    return lab_setup("kafka-setup.sh", timeout=900)

def _cluster_id():
    """What StorageTool random-uuid prints: 16 random bytes, URL-safe base64,
    never starting with '-' (Kafka's Uuid.randomUuid() rejects those too: the
    command line would read the id as an option, 1 time in 64)."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


class KafkaBroker:
    def __init__(self, host="127.0.0.1", port=None, auto_create=True, partitions=1,
                 netns=None, workdir=None, outlives_tests=False, advertised_port=None,
                 relayed=None):
        if not netns and not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"broker address {host} in the root namespace: use loopback, "
                             "or an address of a namespace the test created (netns=)")
        self.host = host
        self.netns = netns
        self.port = port or free_tcp_port(host if not netns else "127.0.0.1")
        self.controller_port = free_tcp_port(host if not netns else "127.0.0.1")
        # A proxy in front (tests/support/toxiproxy.py): clients are sent to
        # its port by the metadata, so every request after the first goes
        # through it too.
        self.advertised_port = advertised_port or self.port
        self.relayed = relayed
        self.relayed_port = free_tcp_port(host if not netns else "127.0.0.1") if relayed else None
        self.auto_create = auto_create
        self.partitions = partitions
        self.libs = kafka_libs()
        self.dir = workdir or tempfile.mkdtemp(prefix="syslogrx-kafka-")
        self.proc = None
        self.formatted = False
        # A module's broker (its fixture closes it): a test that restarts it
        # leaves the new process running for the next test (conftest's reaper).
        self.outlives_tests = outlives_tests
        self.log_path = os.path.join(self.dir, "broker.log")

    @property
    def bootstrap(self):
        return f"{self.host}:{self.port}"

    def _wrap(self, argv):
        return (["ip", "netns", "exec", self.netns] + argv) if self.netns else argv

    def _java(self, *args):
        return self._wrap(["java", JAVA_HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                           "-Xshare:auto", "-cp", os.path.join(self.libs, "*")] + list(args))

    def _write_config(self):
        listeners = f"PLAINTEXT://{self.host}:{self.port},CONTROLLER://{self.host}:{self.controller_port}"
        advertised = f"PLAINTEXT://{self.host}:{self.advertised_port}"
        protocols = "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
        if self.relayed:
            listeners += f",RELAYED://{self.host}:{self.relayed_port}"
            advertised += f",RELAYED://{self.relayed[0]}:{self.relayed[1]}"
            protocols += ",RELAYED:PLAINTEXT"
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@{self.host}:{self.controller_port}",
            "listeners": listeners,
            "advertised.listeners": advertised,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": protocols,
            "log.dirs": os.path.join(self.dir, "data"),
            "num.partitions": str(self.partitions),
            "auto.create.topics.enable": "true" if self.auto_create else "false",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "log.flush.interval.messages": "1",   # a SIGKILL loses nothing acked
        }
        path = os.path.join(self.dir, "server.properties")
        with open(path, "w") as f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        return path

    def _format(self, cfg):
        out = subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", _cluster_id(),
                                        "-c", cfg), capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"kafka storage format failed: {out.stdout}{out.stderr}"
        self.formatted = True

    def start(self, timeout=90):
        """Starts the broker (formatting storage the first time) and waits
        until it answers metadata requests."""
        cfg = os.path.join(self.dir, "server.properties")
        if not self.formatted:
            cfg = self._write_config()
            self._format(cfg)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self._java("kafka.Kafka", cfg), stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        if self.outlives_tests:
            outlives_the_test(self.proc.pid)
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"kafka exited with {self.proc.returncode}:\n{self.log_tail()}")
            r = subprocess.run(self._wrap(["kcat", "-L", "-b", self.bootstrap, "-m", "2"]),
                               capture_output=True, text=True, timeout=30)
            if r.returncode == 0 and "1 brokers" in r.stdout:
                return
            time.sleep(0.3)
        raise AssertionError(f"kafka did not become ready within {timeout}s:\n{self.log_tail()}")

    def warm_up(self, timeout=60):
        """Produces one record with an idempotent producer: a fresh broker
        answers InitProducerId with COORDINATOR_LOAD_IN_PROGRESS for a while,
        which would delay a test's first deliveries."""
        self.create_topic("__warmup", 1)
        r = subprocess.run(self._wrap(["kcat", "-P", "-b", self.bootstrap, "-t", "__warmup",
                                       "-X", "enable.idempotence=true"]),
                           input=b"warm\n", capture_output=True, timeout=timeout)
        assert r.returncode == 0, f"warm-up produce: {r.stderr.decode(errors='replace')}"

    def wait_records(self, topic, count, timeout=60):
        """Until topic holds at least count records (a generous bound)."""
        deadline = time.monotonic() + timeout
        n = 0
        while time.monotonic() < deadline:
            n = self.consume(topic, fmt="x").count(b"x")
            if n >= count:
                return n
            time.sleep(0.2)
        raise AssertionError(f"{topic}: {n} records, {count} expected within {timeout}s")

    def log_tail(self, n=40):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Stops the broker by its pid (SIGTERM: clean shutdown; SIGKILL: a crash)."""
        if not self.proc:
            return
        signal_and_reap(self.proc, sig, timeout)
        self.proc = None

    def close(self):
        self.stop(signal.SIGKILL)
        shutil.rmtree(self.dir, ignore_errors=True)

    def create_topic(self, topic, partitions=1):
        out = subprocess.run(self._java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                                        self.bootstrap, "--create", "--topic", topic,
                                        "--partitions", str(partitions), "--replication-factor", "1"),
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"creating topic {topic}: {out.stdout}{out.stderr}"
        self.wait_topic(topic, partitions)

    def wait_topic(self, topic, partitions, timeout=30):
        """Until every partition of topic has a leader."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run(self._wrap(["kcat", "-L", "-b", self.bootstrap, "-t", topic, "-m", "2"]),
                               capture_output=True, text=True, timeout=30)
            if r.returncode == 0 and f"with {partitions} partitions" in r.stdout \
                    and "leader -1" not in r.stdout and "Error" not in r.stdout:
                return
            time.sleep(0.2)
        raise AssertionError(f"topic {topic} not ready: {r.stdout}{r.stderr}")

    def consume(self, topic, fmt="%k\\t%s\\n", timeout=60):
        """Every record in topic, from the beginning to the current end, as
        bytes in kcat's -f format (default: key TAB value NL)."""
        r = subprocess.run(self._wrap(["kcat", "-C", "-b", self.bootstrap, "-t", topic, "-o",
                                       "beginning", "-e", "-q", "-f", fmt]),
                           capture_output=True, timeout=timeout)
        assert r.returncode == 0, f"kcat -C {topic}: {r.stderr.decode(errors='replace')}"
        return r.stdout

    def records(self, topic, timeout=60):
        """[(partition, key, value)] with keys/values as bytes, framed by
        lengths so any byte is safe."""
        raw = self.consume(topic, fmt="%p %K %S:%k%s", timeout=timeout)
        out, i = [], 0
        while i < len(raw):
            sp1 = raw.index(b" ", i)
            part = int(raw[i:sp1])
            sp2 = raw.index(b" ", sp1 + 1)
            klen = int(raw[sp1 + 1:sp2])
            colon = raw.index(b":", sp2 + 1)
            vlen = int(raw[sp2 + 1:colon])
            j = colon + 1
            # kcat prints -1 for a null key and writes nothing for it
            key = None if klen < 0 else raw[j:j + klen]
            j += max(klen, 0)
            out.append((part, key, raw[j:j + vlen]))
            i = j + vlen
        return out


if __name__ == "__main__":
    # Manual check: start, create a topic, produce with kcat, read back, stop.
    t0 = time.monotonic()
    b = KafkaBroker(auto_create=False)
    try:
        b.start()
        print(f"started {b.bootstrap} in {time.monotonic() - t0:.1f}s")
        b.create_topic("smoke", 2)
        subprocess.run(["kcat", "-P", "-b", b.bootstrap, "-t", "smoke"], input=b"a\nb\n", check=True)
        print(b.records("smoke"))
    finally:
        b.close()
    print(f"total {time.monotonic() - t0:.1f}s")
