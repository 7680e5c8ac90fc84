// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "common/parse_num.h"
#include "rx/config.h"
#include "rx/resize_file.h"

#define RESIZE_FILE_MAX 4096

static int parse_line(char *line, unsigned int lineno, struct resize_request *req,
		      char *err, size_t errlen)
{
	char *key, *val, *extra, *save = NULL;
	uint64_t v;

	line[strcspn(line, "#")] = '\0';
	key = strtok_r(line, " \t\r", &save);
	if (!key)
		return 0;
	val = strtok_r(NULL, " \t\r", &save);
	extra = strtok_r(NULL, " \t\r", &save);
	if (!val || extra) {
		snprintf(err, errlen, "line %u: expected 'KEY VALUE'", lineno);
		return -EINVAL;
	}
	if (!strcmp(key, "sockets") || !strcmp(key, "threads")) {
		if (parse_u64(val, 1, CONFIG_MAX_SOCKETS, &v)) {
			snprintf(err, errlen, "line %u: %s %s: expected a number from 1 to %d",
				 lineno, key, val, CONFIG_MAX_SOCKETS);
			return -EINVAL;
		}
		if (key[0] == 's')
			req->sockets = v;
		else
			req->threads = v;
		return 0;
	}
	if (!strcmp(key, "shrink")) {
		if (strcmp(val, "naive") && strcmp(val, "safe")) {
			snprintf(err, errlen, "line %u: shrink %s: expected safe or naive", lineno, val);
			return -EINVAL;
		}
		req->naive = !strcmp(val, "naive");
		return 0;
	}
	snprintf(err, errlen, "line %u: unknown key '%s' (sockets, threads, shrink)", lineno, key);
	return -EINVAL;
}

int resize_parse(const char *text, struct resize_request *req, char *err, size_t errlen)
{
	char buf[RESIZE_FILE_MAX];
	unsigned int lineno = 0;
	char *line, *save = NULL;
	int e;

	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "longer than %d bytes", RESIZE_FILE_MAX - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	/* strtok_r would skip empty lines and so miscount: split by hand. */
	for (line = buf; line; line = save) {
		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		e = parse_line(line, ++lineno, req, err, errlen);
		if (e)
			return e;
	}
	return 0;
}

int resize_file_read(const char *path, struct resize_request *req, char *err, size_t errlen)
{
	char text[RESIZE_FILE_MAX];
	size_t n;
	FILE *f = fopen(path, "r");
	int e;

	if (!f) {
		e = -errno;
		snprintf(err, errlen, "%s", strerror(errno));
		return e;
	}
	n = fread(text, 1, sizeof(text), f);
	e = ferror(f) ? -EIO : 0;
	fclose(f);
	if (e) {
		snprintf(err, errlen, "read error");
		return e;
	}
	if (n == sizeof(text)) {
		snprintf(err, errlen, "longer than %d bytes", RESIZE_FILE_MAX - 1);
		return -EINVAL;
	}
	text[n] = '\0';
	return resize_parse(text, req, err, errlen);
}
