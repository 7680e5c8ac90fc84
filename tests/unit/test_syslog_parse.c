// SPDX-License-Identifier: MIT
/*
 * syslog_parse(): a table of real messages with byte-exact expectations for
 * every field. Every input is parsed from the very end of a page followed by
 * a PROT_NONE guard page, so any read past len faults, and so is every
 * prefix of every input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "syslog/syslog_parse.h"

struct exp_str {
	const char *s; /* NULL: absent */
	size_t len;
};

/* clang-format off */
#define S(x) { x, sizeof(x) - 1 }
/* clang-format on */
#define IN(x) .in = x, .len = sizeof(x) - 1

struct pcase {
	const char *name;
	const char *in;
	size_t len;
	enum syslog_parse_result r;
	int pri;
	int version;
	struct exp_str ts, host, app, procid, msgid, sd, msg;
	bool bom;
	uint32_t flags;
};

#define NOH SYSLOG_F_NO_HOSTNAME
#define NOTS SYSLOG_F_NO_TIMESTAMP

/* One case per block, fields in the order of struct pcase: kept as written. */
/* clang-format off */
static const struct pcase cases[] = {
	/* ---- RFC 5424 section 6.5 ---- */
	{ "5424 example 1",
	  IN("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
	     "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8"),
	  SYSLOG_OK_5424, 34, 1, S("2003-10-11T22:14:15.003Z"), S("mymachine.example.com"),
	  S("su"), {0}, S("ID47"), {0}, S("'su root' failed for lonvick on /dev/pts/8"), true, 0 },
	{ "5424 example 2",
	  IN("<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
	     "%% It's time to make the do-nuts."),
	  SYSLOG_OK_5424, 165, 1, S("2003-08-24T05:14:15.000003-07:00"), S("192.0.2.1"),
	  S("myproc"), S("8710"), {0}, {0}, S("%% It's time to make the do-nuts."), false, 0 },
	{ "5424 example 3",
	  IN("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
	     "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"] "
	     "\xEF\xBB\xBF" "An application event log entry..."),
	  SYSLOG_OK_5424, 165, 1, S("2003-10-11T22:14:15.003Z"), S("mymachine.example.com"),
	  S("evntslog"), {0}, S("ID47"), S("[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]"), S("An application event log entry..."), true, 0 },
	{ "5424 example 4: two SD elements, no MSG",
	  IN("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
	     "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"]"
	     "[examplePriority@32473 class=\"high\"]"),
	  SYSLOG_OK_5424, 165, 1, S("2003-10-11T22:14:15.003Z"), S("mymachine.example.com"),
	  S("evntslog"), {0}, S("ID47"), S("[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" eventID=\"1011\"][examplePriority@32473 class=\"high\"]"), {0}, false, 0 },
	{ "5424 SD escapes \\\" \\] \\\\ and an empty value",
	  IN("<13>1 2024-01-02T03:04:05+01:00 host app 42 MID "
	     "[a@1 k=\"x\\\"y\\]z\\\\\" l=\"\"][b@2] hi"),
	  SYSLOG_OK_5424, 13, 1, S("2024-01-02T03:04:05+01:00"), S("host"),
	  S("app"), S("42"), S("MID"), S("[a@1 k=\"x\\\"y\\]z\\\\\" l=\"\"][b@2]"), S("hi"), false, 0 },
	{ "5424 all NILVALUE",
	  IN("<14>1 - - - - - -"),
	  SYSLOG_OK_5424, 14, 1, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, NOTS },
	{ "5424 space then nothing",
	  IN("<14>1 - - - - - - "),
	  SYSLOG_OK_5424, 14, 1, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, NOTS },
	{ "5424 trailing newline",
	  IN("<14>1 - - - - - - hello\n"),
	  SYSLOG_OK_5424, 14, 1, {0}, {0},
	  {0}, {0}, {0}, {0}, S("hello"), false, NOTS | SYSLOG_F_TRAILING_NEWLINE },
	{ "5424 Juniper structured-data",
	  IN("<165>1 2007-02-15T09:17:15.719Z router1 mgd 3046 UI_DBASE_LOGOUT_EVENT "
	     "[junos@2636.1.1.1.2.18 username=\"user\"] User 'user' exiting configuration mode"),
	  SYSLOG_OK_5424, 165, 1, S("2007-02-15T09:17:15.719Z"), S("router1"),
	  S("mgd"), S("3046"), S("UI_DBASE_LOGOUT_EVENT"), S("[junos@2636.1.1.1.2.18 username=\"user\"]"), S("User 'user' exiting configuration mode"), false, 0 },
	{ "5424 journald via rsyslog",
	  IN("<30>1 2023-10-11T22:14:15.123456+00:00 web01 systemd 1 - - "
	     "Started Session 42 of user root.\n"),
	  SYSLOG_OK_5424, 30, 1, S("2023-10-11T22:14:15.123456+00:00"), S("web01"),
	  S("systemd"), S("1"), {0}, {0}, S("Started Session 42 of user root."), false, SYSLOG_F_TRAILING_NEWLINE },
	{ "5424 message with newline, tab and UTF-8 inside",
	  IN("<11>1 2023-10-11T22:14:15Z h a p m - line1\nline2\tcaf\xc3\xa9"),
	  SYSLOG_OK_5424, 11, 1, S("2023-10-11T22:14:15Z"), S("h"),
	  S("a"), S("p"), S("m"), {0}, S("line1\x0A" "line2\x09" "caf\xC3" "\xA9" ""), false, 0 },

	/* ---- RFC 3164 section 5.4 ---- */
	{ "3164 example 1",
	  IN("<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8"),
	  SYSLOG_OK_3164, 34, 0, S("Oct 11 22:14:15"), S("mymachine"),
	  S("su"), {0}, {0}, {0}, S("'su root' failed for lonvick on /dev/pts/8"), false, 0 },
	{ "3164 example 2: no PRI, no header",
	  IN("Use the BFG!"),
	  SYSLOG_OK_3164, 13, 0, {0}, {0},
	  S("Use"), {0}, {0}, {0}, S("the BFG!"), false, SYSLOG_F_NO_PRI | NOTS | NOH },
	{ "3164 example 3: IP as hostname, no tag",
	  IN("<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!"),
	  SYSLOG_OK_3164, 13, 0, S("Feb  5 17:32:18"), S("10.0.0.99"),
	  S("Use"), {0}, {0}, {0}, S("the BFG!"), false, 0 },
	{ "3164 example 4: zone and year after the time stay in msg",
	  IN("<165>Aug 24 05:34:00 CST 1987 mymachine myproc[10]: %% It's time to make the "
	     "do-nuts.  %%  Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, "
	     "Jelly_Injector=OK, Frier=OK # Transport: Conveyer1=OK, Conveyer2=OK # %%"),
	  SYSLOG_OK_3164, 165, 0, S("Aug 24 05:34:00"), S("CST"),
	  S("1987"), {0}, {0}, {0}, S("mymachine myproc[10]: %% It's time to make the do-nuts.  %%  Ingredients: Mix=OK, Jelly=OK # Devices: Mixer=OK, Jelly_Injector=OK, Frier=OK # Transport: Conveyer1=OK, Conveyer2=OK # %%"), false, 0 },
	{ "3164 example 5: year first is no timestamp",
	  IN("<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: "
	     "That's too early to be sure"),
	  SYSLOG_OK_3164, 0, 0, {0}, {0},
	  S("1990"), {0}, {0}, {0}, S("Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's too early to be sure"), false, NOTS | NOH },

	/* ---- RFC 3164 variants ---- */
	{ "3164 ISO 8601 timestamp",
	  IN("<34>2023-10-11T22:14:15.003Z host app: msg"),
	  SYSLOG_OK_3164, 34, 0, S("2023-10-11T22:14:15.003Z"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_ISO_TIMESTAMP_3164 | SYSLOG_F_TS_YEAR },
	{ "3164 rsyslog forward format",
	  IN("<30>2023-10-11T22:14:15.123456+02:00 web01 sshd[812]: Accepted publickey for "
	     "alice from 10.0.0.5 port 50000 ssh2"),
	  SYSLOG_OK_3164, 30, 0, S("2023-10-11T22:14:15.123456+02:00"), S("web01"),
	  S("sshd"), S("812"), {0}, {0}, S("Accepted publickey for alice from 10.0.0.5 port 50000 ssh2"), false, SYSLOG_F_ISO_TIMESTAMP_3164 | SYSLOG_F_TS_YEAR },
	{ "3164 with year",
	  IN("<13>Oct 11 2023 22:14:15 host app: msg"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 2023 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_TS_YEAR },
	{ "3164 with milliseconds and pid",
	  IN("<13>Oct 11 22:14:15.123 host app[77]: msg"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15.123"), S("host"),
	  S("app"), S("77"), {0}, {0}, S("msg"), false, 0 },
	{ "3164 single-digit day, space padded",
	  IN("<30>Oct  1 08:00:01 web01 systemd[1]: Started Session 42 of user root."),
	  SYSLOG_OK_3164, 30, 0, S("Oct  1 08:00:01"), S("web01"),
	  S("systemd"), S("1"), {0}, {0}, S("Started Session 42 of user root."), false, 0 },
	{ "3164 single-digit day, not padded",
	  IN("<78>Oct 1 08:00:01 web01 CRON[99]: (root) CMD (run-parts /etc/cron.hourly)"),
	  SYSLOG_OK_3164, 78, 0, {0}, {0},
	  S("Oct"), {0}, {0}, {0}, S("1 08:00:01 web01 CRON[99]: (root) CMD (run-parts /etc/cron.hourly)"), false, NOTS | NOH },
	{ "Linux kernel via rsyslog",
	  IN("<6>Oct 11 22:14:15 web01 kernel: [   12.345678] eth0: link up\n"),
	  SYSLOG_OK_3164, 6, 0, S("Oct 11 22:14:15"), S("web01"),
	  S("kernel"), {0}, {0}, {0}, S("[   12.345678] eth0: link up"), false, SYSLOG_F_TRAILING_NEWLINE },
	{ "no PRI, full 3164 header",
	  IN("Oct 11 22:14:15 host app[1]: msg"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), S("1"), {0}, {0}, S("msg"), false, SYSLOG_F_NO_PRI },
	{ "no timestamp, tag only",
	  IN("<14>su: hello"),
	  SYSLOG_OK_3164, 14, 0, {0}, {0},
	  S("su"), {0}, {0}, {0}, S("hello"), false, NOTS | NOH },
	{ "tag without message",
	  IN("<14>Oct 11 22:14:15 host app:"),
	  SYSLOG_OK_3164, 14, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, {0}, false, 0 },
	{ "no hostname: tag right after the timestamp",
	  IN("<34>Oct 11 22:14:15 su[5]: local message"),
	  SYSLOG_OK_3164, 34, 0, S("Oct 11 22:14:15"), {0},
	  S("su"), S("5"), {0}, {0}, S("local message"), false, NOH },
	{ "timestamp only",
	  IN("<34>Oct 11 22:14:15"),
	  SYSLOG_OK_3164, 34, 0, S("Oct 11 22:14:15"), {0},
	  {0}, {0}, {0}, {0}, {0}, false, NOH },
	{ "PRI then 1 without space is not 5424",
	  IN("<34>1"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, {0}, false, NOTS | NOH },

	/* ---- devices ---- */
	{ "Cisco IOS seq, unsynced clock",
	  IN("<189>123: *Mar  1 18:48:50.483 UTC: %SYS-5-CONFIG_I: Configured from console by "
	     "vty0 (10.0.0.1)"),
	  SYSLOG_OK_3164, 189, 0, S("Mar  1 18:48:50.483"), {0},
	  S("UTC"), {0}, {0}, {0}, S("%SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.1)"), false, SYSLOG_F_SEQUENCE | NOH },
	{ "Cisco IOS seq: host:",
	  IN("<187>45: router1: *Mar  1 18:48:50.483 UTC: %LINK-3-UPDOWN: Interface "
	     "GigabitEthernet0/1, changed state to down"),
	  SYSLOG_OK_3164, 187, 0, {0}, {0},
	  S("router1"), {0}, {0}, {0}, S("*Mar  1 18:48:50.483 UTC: %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"), false, NOTS | SYSLOG_F_SEQUENCE | NOH },
	{ "Cisco IOS seq, synced clock, year, CET",
	  IN("<189>1234: Oct 11 2023 22:14:15.003 CET: %SYS-5-RESTART: System restarted --"),
	  SYSLOG_OK_3164, 189, 0, {0}, {0},
	  S("Oct"), {0}, {0}, {0}, S("11 2023 22:14:15.003 CET: %SYS-5-RESTART: System restarted --"), false, NOTS | SYSLOG_F_SEQUENCE | NOH },
	{ "Cisco IOS seq without timestamps",
	  IN("<189>77: %SYS-5-CONFIG_I: Configured from console"),
	  SYSLOG_OK_3164, 189, 0, {0}, {0},
	  S("%SYS-5-CONFIG_I"), {0}, {0}, {0}, S("Configured from console"), false, NOTS | SYSLOG_F_SEQUENCE | NOH },
	{ "Cisco IOS no seq, '.' marker",
	  IN("<190>.Mar  1 18:48:50: %SYS-6-LOGGINGHOST_STARTSTOP: Logging to host 10.0.0.9"),
	  SYSLOG_OK_3164, 190, 0, S("Mar  1 18:48:50"), {0},
	  S("%SYS-6-LOGGINGHOST_STARTSTOP"), {0}, {0}, {0}, S("Logging to host 10.0.0.9"), false, NOH },
	{ "Cisco ASA",
	  IN("<166>Oct 11 2023 22:14:15: %ASA-6-302013: Built outbound TCP connection 1 for "
	     "outside:10.0.0.1/443 (10.0.0.1/443) to inside:192.168.1.2/50000 (192.168.1.2/50000)"),
	  SYSLOG_OK_3164, 166, 0, S("Oct 11 2023 22:14:15"), {0},
	  S("%ASA-6-302013"), {0}, {0}, {0}, S("Built outbound TCP connection 1 for outside:10.0.0.1/443 (10.0.0.1/443) to inside:192.168.1.2/50000 (192.168.1.2/50000)"), false, SYSLOG_F_TS_YEAR | NOH },
	{ "Juniper Junos BSD format",
	  IN("<28>Oct 11 22:14:15 router1 mib2d[1234]: SNMP_TRAP_LINK_DOWN: ifIndex 589, "
	     "ifAdminStatus up(1), ifOperStatus down(2), ifName ge-0/0/1"),
	  SYSLOG_OK_3164, 28, 0, S("Oct 11 22:14:15"), S("router1"),
	  S("mib2d"), S("1234"), {0}, {0}, S("SNMP_TRAP_LINK_DOWN: ifIndex 589, ifAdminStatus up(1), ifOperStatus down(2), ifName ge-0/0/1"), false, 0 },
	{ "Palo Alto CSV",
	  IN("<14>Oct 11 22:14:15 PA-5050 1,2023/10/11 22:14:15,012345678901,TRAFFIC,end,2049,"
	     "2023/10/11 22:14:15,10.0.0.1,8.8.8.8,0.0.0.0,0.0.0.0,allow-dns,,,dns,vsys1,trust,"
	     "untrust,ethernet1/2,ethernet1/1,default,2023/10/11 22:14:15,12345,1,53000,53,0,0,"
	     "0x19,udp,allow,180,80,100,2,2023/10/11 22:14:00,0,any,0,123456,0x0,"
	     "10.0.0.0-10.255.255.255,United States,0,1,1,aged-out,0,0,0,0,,PA-5050,from-policy"),
	  SYSLOG_OK_3164, 14, 0, S("Oct 11 22:14:15"), S("PA-5050"),
	  S("1,2023/10/11"), {0}, {0}, {0}, S("22:14:15,012345678901,TRAFFIC,end,2049,2023/10/11 22:14:15,10.0.0.1,8.8.8.8,0.0.0.0,0.0.0.0,allow-dns,,,dns,vsys1,trust,untrust,ethernet1/2,ethernet1/1,default,2023/10/11 22:14:15,12345,1,53000,53,0,0,0x19,udp,allow,180,80,100,2,2023/10/11 22:14:00,0,any,0,123456,0x0,10.0.0.0-10.255.255.255,United States,0,1,1,aged-out,0,0,0,0,,PA-5050,from-policy"), false, 0 },

	/* ---- bytes ---- */
	{ "trailing NUL",
	  IN("<13>Oct 11 22:14:15 host app: msg\0"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_TRAILING_NUL },
	{ "trailing CR LF",
	  IN("<13>Oct 11 22:14:15 host app: msg\r\n"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_TRAILING_NEWLINE },
	{ "embedded NUL",
	  IN("<13>Oct 11 22:14:15 host app: a\0b"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("a\x00" "b"), false, SYSLOG_F_HAS_NUL },
	{ "invalid UTF-8",
	  IN("<13>Oct 11 22:14:15 host app: caf\xe9 \xff"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("caf\xE9" " \xFF" ""), false, SYSLOG_F_INVALID_UTF8 },
	{ "valid UTF-8 after 16 ASCII bytes",
	  IN("<13>Oct 11 22:14:15 host app: caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("caf\xC3" "\xA9" " \xE6" "\x97" "\xA5" "\xE6" "\x9C" "\xAC" " \xF0" "\x9F" "\x98" "\x80" ""), false, 0 },
	{ "host token with a control byte stays in msg",
	  IN("<13>Oct 11 22:14:15 ho\tst app: x"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), {0},
	  S("app"), {0}, {0}, {0}, S("x"), false, NOH },
	{ "3164 '-' is never a field (found by the fuzzer)",
	  IN("<13>Oct 11 22:14:15 - -: x"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("-"),
	  S("-"), {0}, {0}, {0}, S("x"), false, 0 },
	{ "3164 PROCID '-' is no tag",
	  IN("<13>Oct 11 22:14:15 h app[-]: x"),
	  SYSLOG_OK_3164, 13, 0, S("Oct 11 22:14:15"), S("h"),
	  S("app"), S("-"), {0}, {0}, S("x"), false, 0 },

	/* ---- malformed ---- */
	{ "empty",
	  IN(""),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_EMPTY },
	{ "only a newline",
	  IN("\n"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_TRAILING_NEWLINE | SYSLOG_F_EMPTY },
	{ "PRI too big",
	  IN("<999>Oct 11 22:14:15 host app: x"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "PRI 192",
	  IN("<192>x"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "PRI empty",
	  IN("<>hi"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "PRI not a number",
	  IN("<1a>hi"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "PRI four digits",
	  IN("<0013>hi"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "PRI without '>'",
	  IN("<13"),
	  SYSLOG_MALFORMED, -1, 0, {0}, {0},
	  {0}, {0}, {0}, {0}, {0}, false, SYSLOG_F_BAD_PRI },
	{ "5424 ends after the version",
	  IN("<34>1 "),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, {0}, false, NOTS | SYSLOG_F_TRUNCATED_HEADER | NOH },
	{ "5424 ends after APP-NAME",
	  IN("<34>1 2003-10-11T22:14:15.003Z host app\n"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("2003-10-11T22:14:15.003Z host app"), false, NOTS | SYSLOG_F_TRAILING_NEWLINE | SYSLOG_F_TRUNCATED_HEADER | NOH },
	{ "5424 BSD timestamp",
	  IN("<34>1 Oct 11 22:14:15 host app - - - msg"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("Oct 11 22:14:15 host app - - - msg"), false, NOTS | SYSLOG_F_BAD_TIMESTAMP | NOH },
	{ "5424 timestamp without zone",
	  IN("<34>1 2003-10-11T22:14:15 host app - - - msg"),
	  SYSLOG_OK_5424, 34, 1, S("2003-10-11T22:14:15"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_TS_NOT_3339 },
	{ "5424 month 13",
	  IN("<34>1 2003-13-11T22:14:15Z host app - - - msg"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("2003-13-11T22:14:15Z host app - - - msg"), false, NOTS | SYSLOG_F_BAD_TIMESTAMP | NOH },
	{ "5424 seven fraction digits",
	  IN("<34>1 2003-10-11T22:14:15.1234567Z host app - - - msg"),
	  SYSLOG_OK_5424, 34, 1, S("2003-10-11T22:14:15.1234567Z"), S("host"),
	  S("app"), {0}, {0}, {0}, S("msg"), false, SYSLOG_F_TS_NOT_3339 },
	{ "5424 APP-NAME of 49 bytes",
	  IN("<34>1 - host aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa - - - msg"),
	  SYSLOG_OK_5424, 34, 1, {0}, S("host"),
	  S("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), {0}, {0}, {0}, S("msg"), false, NOTS },
	{ "5424 two spaces",
	  IN("<34>1 - host  app - - - msg"),
	  SYSLOG_OK_5424, 34, 1, {0}, S("host"),
	  {0}, S("app"), {0}, {0}, S("- msg"), false, NOTS },
	{ "5424 SD not closed",
	  IN("<34>1 - host app - - [id@1 k=\"v\" hi"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("- host app - - [id@1 k=\"v\" hi"), false, NOTS | SYSLOG_F_BAD_SD | NOH },
	{ "5424 SD value not closed",
	  IN("<34>1 - host app - - [id@1 k=\"v\\\"] hi"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("- host app - - [id@1 k=\"v\\\"] hi"), false, NOTS | SYSLOG_F_BAD_SD | NOH },
	{ "5424 SD with a newline",
	  IN("<34>1 - host app - - [id@1 k=\"a\nb\"] hi"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("- host app - - [id@1 k=\"a\x0A" "b\"] hi"), false, NOTS | SYSLOG_F_BAD_SD | NOH },
	{ "5424 SD-ID of 33 bytes",
	  IN("<34>1 - h a - - [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]"),
	  SYSLOG_OK_5424, 34, 1, {0}, S("h"),
	  S("a"), {0}, {0}, S("[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]"), {0}, false, NOTS },
	{ "5424 no space after SD",
	  IN("<34>1 - h a - - -msg"),
	  SYSLOG_OK_3164, 34, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("- h a - - -msg"), false, NOTS | SYSLOG_F_BAD_SD | NOH },

	/* ---- syslog-ng's reading of what devices send (each checked against
	 * syslog-ng by tests/integration/receive/test_parse_vs_syslog_ng.py's shapes) ---- */
	{ "space after PRI",
	  IN("<6> Nov 27 23:38:04 h0001 a10logd: [audit log] hi"),
	  SYSLOG_OK_3164, 6, 0, S("Nov 27 23:38:04"), S("h0001"),
	  S("a10logd"), {0}, {0}, {0}, S("[audit log] hi"), false, 0 },
	{ "TAG ends at ':' (CEF)",
	  IN("<14>Nov 27 23:38:04 edge-h11 CEF:0|Vendor|Product|1.0|100|name|5|src=10.0.0.1"),
	  SYSLOG_OK_3164, 14, 0, S("Nov 27 23:38:04"), S("edge-h11"),
	  S("CEF"), {0}, {0}, {0}, S("0|Vendor|Product|1.0|100|name|5|src=10.0.0.1"), false, 0 },
	{ "no PRI, a year after the time",
	  IN("Nov 27 23:38:04 2026 silverpeak-h0035 tunneld[1234]: tunnel up"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04 2026"), S("silverpeak-h0035"),
	  S("tunneld"), S("1234"), {0}, {0}, S("tunnel up"), false, SYSLOG_F_NO_PRI | SYSLOG_F_TS_YEAR },
	{ "Cisco SEQ: HOST: is a TAG (no stamp follows SEQ)",
	  IN("<166>20: h0227: Nov 27 23:38:04.444: %SYS-6-X: y"),
	  SYSLOG_OK_3164, 166, 0, {0}, {0},
	  S("h0227"), {0}, {0}, {0}, S("Nov 27 23:38:04.444: %SYS-6-X: y"), false, NOTS | SYSLOG_F_SEQUENCE | NOH },
	{ "Cisco '*' stamp, zone name read as TAG",
	  IN("<166>*Nov 27 23:38:04.444 UTC: %SYS-5-CONFIG_I: y"),
	  SYSLOG_OK_3164, 166, 0, S("Nov 27 23:38:04.444"), {0},
	  S("UTC"), {0}, {0}, {0}, S("%SYS-5-CONFIG_I: y"), false, NOH },
	{ "Cisco '.' stamp, TAG after it",
	  IN("<166>.Nov 27 23:38:04.444: %SYS-5-CONFIG_I: y"),
	  SYSLOG_OK_3164, 166, 0, S("Nov 27 23:38:04.444"), {0},
	  S("%SYS-5-CONFIG_I"), {0}, {0}, {0}, S("y"), false, NOH },
	{ "HOST : msg",
	  IN("<13>Nov 27 23:38:04 h0025 : msg after a colon"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("h0025"),
	  {0}, {0}, {0}, {0}, S("msg after a colon"), false, 0 },
	{ "[pid] after a space stays in msg",
	  IN("<13>Nov 27 23:38:04 citrix-h0026 prog [77]: pid"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("citrix-h0026"),
	  S("prog"), {0}, {0}, {0}, S("[77]: pid"), false, 0 },
	{ "PID without ':'",
	  IN("<13>Nov 27 23:38:04 h0027 prog[88] no colon"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("h0027"),
	  S("prog"), S("88"), {0}, {0}, S("no colon"), false, 0 },
	{ "two spaces before HOST and before TAG",
	  IN("<13>Nov 27 23:38:04  two-h0020  prog: two"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("two-h0020"),
	  S("prog"), {0}, {0}, {0}, S("two"), false, 0 },
	{ "ISO with a space and a comma (Aruba)",
	  IN("<46>2026-11-27 23:38:04,444 aruba-cp-h0017 CPPM_System_Events 1 0 event"),
	  SYSLOG_OK_3164, 46, 0, S("2026-11-27 23:38:04,444"), S("aruba-cp-h0017"),
	  S("CPPM_System_Events"), {0}, {0}, {0}, S("1 0 event"), false, SYSLOG_F_TS_YEAR },
	{ "HOST that is an IPv6 address",
	  IN("<13>Nov 27 23:38:04 fe80::1 prog: v6 host"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("fe80::1"),
	  S("prog"), {0}, {0}, {0}, S("v6 host"), false, 0 },
	{ "HOST: is no HOST",
	  IN("<13>Nov 27 23:38:04 h0227: prog: x"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), {0},
	  S("h0227"), {0}, {0}, {0}, S("prog: x"), false, NOH },
	{ "3164 TAG and PID '-' kept",
	  IN("<13>Nov 27 23:38:04 - -[-]: x"),
	  SYSLOG_OK_3164, 13, 0, S("Nov 27 23:38:04"), S("-"),
	  S("-"), S("-"), {0}, {0}, S("x"), false, 0 },
	{ "5424 APP-NAME over 48 bytes is cut, as syslog-ng does",
	  IN("<134>1 2026-11-27T23:38:04Z h40 app-name-that-is-far-longer-than-forty-eight-characters-x 12 ID1 - msg"),
	  SYSLOG_OK_5424, 134, 1, S("2026-11-27T23:38:04Z"), S("h40"),
	  S("app-name-that-is-far-longer-than-forty-eight-cha"), S("12"), S("ID1"), {0}, S("msg"), false, 0 },
	{ "5424 stamp without zone",
	  IN("<134>1 2026-11-27T23:38:04.123 h42 app 12 ID1 - no zone"),
	  SYSLOG_OK_5424, 134, 1, S("2026-11-27T23:38:04.123"), S("h42"),
	  S("app"), S("12"), S("ID1"), {0}, S("no zone"), false, SYSLOG_F_TS_NOT_3339 },
	{ "5424 offset without ':' is no 5424: read as 3164",
	  IN("<134>1 2026-11-27T23:38:04.123-0600 h43 app 12 ID1 - x"),
	  SYSLOG_OK_3164, 134, 0, {0}, {0},
	  S("1"), {0}, {0}, {0}, S("2026-11-27T23:38:04.123-0600 h43 app 12 ID1 - x"), false, NOTS | SYSLOG_F_BAD_TIMESTAMP | NOH },
};
/* clang-format on */

static char *guard_page; /* a readable page followed by a PROT_NONE one */
static size_t page_size;

static int setup(void **state)
{
	page_size = sysconf(_SC_PAGESIZE);
	guard_page = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (guard_page == MAP_FAILED)
		return -1;
	if (mprotect(guard_page + page_size, page_size, PROT_NONE))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	return munmap(guard_page, 2 * page_size);
}

/* data placed so that data[len] is the first byte of the guard page */
static const char *at_page_end(const char *in, size_t len)
{
	char *p = guard_page + page_size - len;

	assert_true(len <= page_size);
	memcpy(p, in, len);
	return p;
}

static void check_str(const char *name, const char *field, const struct syslog_str *got,
		      const struct exp_str *want)
{
	if (!want->s) {
		if (got->p || got->len)
			fail_msg("%s: %s: want absent, got '%.*s'", name, field, (int)got->len,
				 got->p ? got->p : "");
		return;
	}
	if (!got->p)
		fail_msg("%s: %s: want '%.*s', got absent", name, field, (int)want->len, want->s);
	if (got->len != want->len || memcmp(got->p, want->s, want->len))
		fail_msg("%s: %s: want '%.*s' (%zu), got '%.*s' (%u)", name, field, (int)want->len,
			 want->s, want->len, (int)got->len, got->p, got->len);
}

static void test_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		const char *data = at_page_end(c->in, c->len);
		struct syslog_msg m;
		enum syslog_parse_result r = syslog_parse(data, c->len, &m);

		if (r != c->r)
			fail_msg("%s: result %d, want %d", c->name, r, c->r);
		if (m.pri != c->pri || m.version != c->version)
			fail_msg("%s: pri %d version %d, want %d %d", c->name, m.pri, m.version,
				 c->pri, c->version);
		assert_int_equal(m.facility, c->pri >= 0 ? c->pri >> 3 : -1);
		assert_int_equal(m.severity, c->pri >= 0 ? c->pri & 7 : -1);
		check_str(c->name, "timestamp", &m.timestamp, &c->ts);
		check_str(c->name, "hostname", &m.hostname, &c->host);
		check_str(c->name, "app_name", &m.app_name, &c->app);
		check_str(c->name, "procid", &m.procid, &c->procid);
		check_str(c->name, "msgid", &m.msgid, &c->msgid);
		check_str(c->name, "structured_data", &m.structured_data, &c->sd);
		check_str(c->name, "msg", &m.msg, &c->msg);
		if (m.bom != c->bom)
			fail_msg("%s: bom %d, want %d", c->name, m.bom, c->bom);
		if (m.flags != c->flags)
			fail_msg("%s: flags 0x%x, want 0x%x", c->name, m.flags, c->flags);
	}
}

static void in_bounds(const struct syslog_str *s, const char *data, size_t len)
{
	if (!s->p) {
		assert_int_equal(s->len, 0);
		return;
	}
	assert_true(s->len > 0);
	assert_true(s->p >= data && s->p + s->len <= data + len);
}

/* Every prefix of every input, ending at the guard page: no fault, fields inside. */
static void test_prefixes_never_read_past_len(void **state)
{
	size_t parsed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t len = 0; len <= cases[i].len; len++) {
			const char *data = at_page_end(cases[i].in, len);
			struct syslog_msg m;

			syslog_parse(data, len, &m);
			in_bounds(&m.timestamp, data, len);
			in_bounds(&m.hostname, data, len);
			in_bounds(&m.app_name, data, len);
			in_bounds(&m.procid, data, len);
			in_bounds(&m.msgid, data, len);
			in_bounds(&m.structured_data, data, len);
			in_bounds(&m.msg, data, len);
			parsed++;
		}
	}
	assert_true(parsed > 3000);
}

struct tm_case {
	const char *in;
	struct syslog_tm tm;
};

/* The parsed timestamp, which format.c converts from. */
static void test_timestamp_parts(void **state)
{
	static const struct tm_case tcs[] = {
		{ "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - x",
		  { 2003, 8, 24, 5, 14, 15, 6, 3, true, -420 } },
		{ "<34>1 2003-10-11T22:14:15.003Z h a - - -",
		  { 2003, 10, 11, 22, 14, 15, 3, 3, true, 0 } },
		{ "<13>1 2024-02-29T23:59:60+05:30 h a - - -",
		  { 2024, 2, 29, 23, 59, 60, 0, 0, true, 330 } },
		{ "<34>Oct 11 22:14:15 h a: x", { 0, 10, 11, 22, 14, 15, 0, 0, false, 0 } },
		{ "<34>Dec  1 00:00:00.123456789 h a: x",
		  { 0, 12, 1, 0, 0, 0, 9, 123456789, false, 0 } },
		/* Cisco PIX/ASA: the year before the time */
		{ "<34>Dec  1 2023 00:00:00: h a: x", { 2023, 12, 1, 0, 0, 0, 0, 0, false, 0 } },
		/* Linksys: the year after the time */
		{ "<34>Dec  1 00:00:00 2023 h a: x", { 2023, 12, 1, 0, 0, 0, 0, 0, false, 0 } },
		/* Cisco's zone name is not read as a zone, as syslog-ng has it */
		{ "<189>1: *Mar  1 18:48:50.483 UTC: %X-1-Y: z",
		  { 0, 3, 1, 18, 48, 50, 3, 483, false, 0 } },
		/* ISO in a 3164 header: a space for the T, a comma (Aruba), no zone */
		{ "<46>2026-11-27 23:38:04,444 h p: x",
		  { 2026, 11, 27, 23, 38, 4, 3, 444, false, 0 } },
		/* RFC 5424 as syslog-ng takes it: nine fraction digits */
		{ "<13>1 2026-11-27T23:38:04.123456789+01:00 h a - - -",
		  { 2026, 11, 27, 23, 38, 4, 9, 123456789, true, 60 } },
	};

	for (size_t i = 0; i < sizeof(tcs) / sizeof(tcs[0]); i++) {
		struct syslog_msg m;

		assert_int_not_equal(syslog_parse(tcs[i].in, strlen(tcs[i].in), &m),
				     SYSLOG_MALFORMED);
		assert_non_null(m.timestamp.p);
		if (memcmp(&m.tm, &tcs[i].tm, sizeof(m.tm)))
			fail_msg("%s: %u-%u-%u %u:%u:%u frac %u/%u tz %d/%d", tcs[i].in, m.tm.year,
				 m.tm.mon, m.tm.mday, m.tm.hour, m.tm.min, m.tm.sec, m.tm.frac,
				 m.tm.frac_digits, m.tm.has_tz, m.tm.tz_min);
	}
}

/* Every PRI value: facility and severity, and where the range ends. */
static void test_all_pri(void **state)
{
	char buf[16];

	for (int pri = 0; pri <= 999; pri++) {
		struct syslog_msg m;
		int n = snprintf(buf, sizeof(buf), "<%d>x", pri);
		enum syslog_parse_result r = syslog_parse(buf, n, &m);

		if (pri <= 191) {
			assert_int_equal(r, SYSLOG_OK_3164);
			assert_int_equal(m.facility, pri / 8);
			assert_int_equal(m.severity, pri % 8);
		} else {
			assert_int_equal(r, SYSLOG_MALFORMED);
			assert_int_equal(m.flags, SYSLOG_F_BAD_PRI);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_prefixes_never_read_past_len),
		cmocka_unit_test(test_timestamp_parts),
		cmocka_unit_test(test_all_pri),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
