/* SPDX-License-Identifier: MIT */
/*
 * Where formatted lines go. One small interface, one file per destination:
 * sink_file.c (null, stdout, file), later tcp and kafka. The output stage
 * hands a sink large buffers of whole lines; a sink never sees one message.
 */
#ifndef SYSLOGRX_SINK_H
#define SYSLOGRX_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

struct sink;

struct sink_ops {
	/* Writes all of buf (whole lines) or fails with -errno. */
	int (*write)(struct sink *s, const char *buf, size_t len);
	/* Reopens the destination (SIGHUP, logrotate). */
	int (*reopen)(struct sink *s);
	void (*close)(struct sink *s);
};

struct sink {
	const struct sink_ops *ops;
	bool discards;		/* null: formatting can be skipped */
	char name[PATH_MAX + 8];	/* for messages: "file:/var/log/x" */
};

/* Opens the sink the config names; NULL + errno, having logged why. */
struct sink *sink_open(const struct config *c);

struct sink *sink_file_open(const struct config *c);

#endif
