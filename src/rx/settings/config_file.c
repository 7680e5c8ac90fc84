// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "rx/settings/config_file.h"

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* Cuts a comment: '#' at the start or after a space (a '#' inside a value,
 * as in a Kafka password, stays). */
static void cut_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

static void prefix_err(const char *path, unsigned int line, char *err, size_t errlen)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s", err);
	snprintf(err, errlen, "%s:%u: %s", path, line, msg);
}

int config_file_read(const char *path, config_entry_fn fn, void *ctx, char *err, size_t errlen)
{
	char buf[CONFIG_FILE_LINE_MAX];
	unsigned int line = 0;
	int ret = 0;
	FILE *f;

	err[0] = '\0';
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(buf, sizeof(buf), f)) {
		char *name, *value = NULL, *eq;
		size_t vl;

		line++;
		if (!strchr(buf, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line longer than %d bytes", path, line,
				 CONFIG_FILE_LINE_MAX - 2);
			ret = -EINVAL;
			break;
		}
		cut_comment(buf);
		name = trim(buf);
		if (!*name)
			continue;
		eq = strchr(name, '=');
		if (eq) {
			*eq = '\0';
			value = trim(eq + 1);
			name = trim(name);
			vl = strlen(value);
			if (vl >= 2 && (value[0] == '"' || value[0] == '\'') &&
			    value[vl - 1] == value[0]) {
				value[vl - 1] = '\0';
				value++;
			}
		}
		if (!*name || strpbrk(name, " \t")) {
			snprintf(err, errlen, "%s:%u: expected `name = value`", path, line);
			ret = -EINVAL;
			break;
		}
		err[0] = '\0';
		ret = fn(name, value ? value : "", value != NULL, line, ctx, err, errlen);
		if (ret) {
			prefix_err(path, line, err, errlen);
			break;
		}
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	return ret;
}
