/* SPDX-License-Identifier: MIT */
/*
 * The tiny file --resize-file names, read on SIGHUP:
 *
 *     sockets 8        # sockets in selection
 *     threads 2        # worker threads
 *     shrink naive     # lab knob: close retiring sockets the naive way
 *
 * Blank lines and '#' comments are ignored; a key not given keeps its value.
 * A stand-in until the --config reader (issue 12) carries these two settings:
 * only this file's parser is then replaced, not the resize.
 */
#ifndef SYSLOGRX_RESIZE_FILE_H
#define SYSLOGRX_RESIZE_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct resize_request {
	unsigned int sockets;
	unsigned int threads;
	bool naive;
};

/* Parses text (NUL-terminated) over req. 0, or -EINVAL with a one-line
 * message in err naming the line. */
int resize_parse(const char *text, struct resize_request *req, char *err, size_t errlen);
/* Reads path and parses it. 0 or -errno, with the message in err. */
int resize_file_read(const char *path, struct resize_request *req, char *err, size_t errlen);

#endif
