// SPDX-License-Identifier: MIT
/*
 * TLS sessions for the tls:HOST:PORT output, over OpenSSL (see tls.h).
 *
 * The server's certificate must chain to --tls-ca (or the system's CAs)
 * and hold the expected name (a DNS name, or an IP address in its
 * subjectAltName): OpenSSL checks both during the handshake, which fails
 * otherwise. Nothing the server or OpenSSL says reaches a log line raw: a
 * certificate subject is the peer's own text (net_text_log escapes it).
 *
 * The socket is non-blocking throughout (tcp.c makes it so): the handshake
 * runs to one absolute deadline, however the server spaces its bytes; a
 * send waits for room at most the stall timeout each time; a TLS 1.3
 * server sends session tickets we must read (and drop) to see whether it
 * closed, and reading must never wait for a server that sends nothing else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include "common/log.h"
#include "common/poll_until.h"
#include "common/net_text.h"
#include "common/secret_file.h"
#include "rx/sink/sink.h"
#include "rx/sink/tls.h"

struct tls_client {
	SSL_CTX *ctx;
	char name[256]; /* verified: a DNS name or an IP address */
	bool name_is_ip;
};

struct tls_session {
	SSL *ssl;
	int fd;
	char refused_cn[128]; /* the common name of the certificate refused, raw */
};

/* OpenSSL's oldest queued error as escaped text (its queue emptied). */
static const char *openssl_text(char *buf, size_t size)
{
	char raw[256];
	unsigned long e = ERR_get_error();

	if (!e) {
		snprintf(buf, size, "no detail from OpenSSL");
		return buf;
	}
	ERR_error_string_n(e, raw, sizeof(raw));
	ERR_clear_error();
	net_text_log(buf, size, raw, strlen(raw));
	return buf;
}

/* Loads the PEM files into ctx; on error logs the flag that named the file. */
static int load_files(SSL_CTX *ctx, const struct tls_files *f)
{
	char why[512];

	if (f->ca[0] ? !SSL_CTX_load_verify_locations(ctx, f->ca, NULL) :
		       !SSL_CTX_set_default_verify_paths(ctx)) {
		pr_warn("%s %s: no CA certificate could be read from it (PEM expected): %s\n",
			f->ca_flag, f->ca[0] ? f->ca : "(the system's)",
			openssl_text(why, sizeof(why)));
		return -EINVAL;
	}
	if (!f->cert[0])
		return 0;
	if (SSL_CTX_use_certificate_chain_file(ctx, f->cert) != 1) {
		pr_warn("%s %s: no certificate could be read from it (PEM expected): %s\n",
			f->cert_flag, f->cert, openssl_text(why, sizeof(why)));
		return -EINVAL;
	}
	secret_path_warn(f->key_flag, f->key);
	/* OpenSSL checks the key against the certificate as it loads it */
	if (SSL_CTX_use_PrivateKey_file(ctx, f->key, SSL_FILETYPE_PEM) != 1 &&
	    ERR_GET_REASON(ERR_peek_error()) != X509_R_KEY_VALUES_MISMATCH) {
		pr_warn("%s %s: no private key could be read from it (PEM expected): %s\n",
			f->key_flag, f->key, openssl_text(why, sizeof(why)));
		return -EINVAL;
	}
	if (ERR_peek_error() || SSL_CTX_check_private_key(ctx) != 1) {
		pr_warn("%s %s: not the key of %s %s: %s\n", f->key_flag, f->key, f->cert_flag,
			f->cert, openssl_text(why, sizeof(why)));
		return -EINVAL;
	}
	return 0;
}

int tls_files_check(const struct tls_files *f)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	int err;

	if (!ctx)
		return -ENOMEM;
	err = load_files(ctx, f);
	SSL_CTX_free(ctx);
	return err;
}

/* OpenSSL's verdict on each certificate of the chain: kept as it is; on a
 * refusal the common name of the server's own certificate (the chain's
 * leaf) is noted for the log (the peer's text as it sent it: escaped when
 * logged). */
static int on_verify(int ok, X509_STORE_CTX *x)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct tls_session *ts = ssl ? SSL_get_app_data(ssl) : NULL;
	X509 *cert = X509_STORE_CTX_get0_cert(x);
	X509_NAME *name = cert ? X509_get_subject_name(cert) : NULL;
	int i = name ? X509_NAME_get_index_by_NID(name, NID_commonName, -1) : -1;

	if (ok || !ts || ts->refused_cn[0])
		return ok;
	if (i >= 0) {
		const ASN1_STRING *cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
		int len = ASN1_STRING_length(cn);

		if (len >= (int)sizeof(ts->refused_cn))
			len = sizeof(ts->refused_cn) - 1;
		memcpy(ts->refused_cn, ASN1_STRING_get0_data(cn), len);
		/* a NUL inside ends the name here: what follows is not shown */
		ts->refused_cn[len] = '\0';
	}
	return ok;
}

struct tls_client *tls_client_new(const struct config *c, const char *host)
{
	struct tls_client *tc = calloc(1, sizeof(*tc));
	unsigned char ip[16];
	int err;

	if (!tc)
		return NULL;
	snprintf(tc->name, sizeof(tc->name), "%s", c->tls.name[0] ? c->tls.name : host);
	tc->name_is_ip = inet_pton(AF_INET, tc->name, ip) == 1 ||
			 inet_pton(AF_INET6, tc->name, ip) == 1;
	tc->ctx = SSL_CTX_new(TLS_client_method());
	err = -ENOMEM;
	if (!tc->ctx)
		goto fail;
	SSL_CTX_set_min_proto_version(tc->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(tc->ctx, SSL_VERIFY_PEER, on_verify);
	err = load_files(tc->ctx, &(struct tls_files){
					  .ca = c->tls.ca,
					  .cert = c->tls.cert,
					  .key = c->tls.key,
					  .ca_flag = "--tls-ca",
					  .cert_flag = "--tls-cert",
					  .key_flag = "--tls-key",
				  });
	if (err)
		goto fail;
	return tc;
fail:
	tls_client_free(tc);
	errno = -err;
	return NULL;
}

void tls_client_free(struct tls_client *tc)
{
	if (!tc)
		return;
	SSL_CTX_free(tc->ctx);
	free(tc);
}

/* Why the handshake failed, for the log: the verification's verdict with
 * the subject the server showed, or OpenSSL's error. */
static int handshake_error(struct tls_client *tc, struct tls_session *ts, int ret, char *why,
			   size_t whylen)
{
	long vr = SSL_get_verify_result(ts->ssl);
	int e = SSL_get_error(ts->ssl, ret);

	if (vr != X509_V_OK) {
		bool name = vr == X509_V_ERR_HOSTNAME_MISMATCH ||
			    vr == X509_V_ERR_IP_ADDRESS_MISMATCH;
		char safe[4 * sizeof(ts->refused_cn)];

		net_text_log(safe, sizeof(safe), ts->refused_cn, strlen(ts->refused_cn));
		snprintf(why, whylen, "the server's certificate (CN %s) is refused: %s%s%s",
			 safe[0] ? safe : "(none)", X509_verify_cert_error_string(vr),
			 name ? ": it is not for " : "", name ? tc->name : "");
		ERR_clear_error();
		return -EPROTO;
	}
	if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN) {
		int saved = errno;

		snprintf(why, whylen, "the connection ended during the TLS handshake%s%s",
			 saved ? ": " : "", saved ? strerror(saved) : "");
		ERR_clear_error();
		return saved == EAGAIN || saved == EWOULDBLOCK ? -ETIMEDOUT : -ECONNRESET;
	}
	/* the server refused us (our certificate, the protocol): not a wait */
	char text[256];

	snprintf(why, whylen, "TLS handshake failed: %s", openssl_text(text, sizeof(text)));
	return -EPROTO;
}

/* Until the socket can give (or take) what OpenSSL asked for: 0, or
 * -ETIMEDOUT at deadline_ns, or -errno. */
static int wait_io(int fd, int ssl_err, uint64_t deadline_ns, const volatile int *stop)
{
	int n = poll_until_unless(fd, ssl_err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
				  deadline_ns, stop);

	return n < 0 ? n : 0;
}

int tls_session_start(struct tls_client *tc, int fd, uint64_t deadline_ns, const volatile int *stop,
		      struct tls_session **out, char *why, size_t whylen)
{
	struct tls_session *ts = calloc(1, sizeof(*ts));
	int ret, err, e;

	if (!ts)
		return -ENOMEM;
	ts->fd = fd;
	ts->ssl = SSL_new(tc->ctx);
	if (!ts->ssl || !SSL_set_fd(ts->ssl, fd)) {
		SSL_free(ts->ssl);
		free(ts);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	SSL_set_app_data(ts->ssl, ts);
	if (tc->name_is_ip) {
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ts->ssl), tc->name);
	} else {
		SSL_set_tlsext_host_name(ts->ssl, tc->name);
		SSL_set1_host(ts->ssl, tc->name);
	}
	/* One deadline for the whole handshake: a server that takes the
	 * connection and says nothing, or trickles its bytes, is an outage
	 * like a server that is down, never a wait without end. */
	for (;;) {
		errno = 0;
		ret = SSL_connect(ts->ssl);
		if (ret == 1)
			break;
		e = SSL_get_error(ts->ssl, ret);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			err = handshake_error(tc, ts, ret, why, whylen);
			goto fail;
		}
		err = wait_io(fd, e, deadline_ns, stop);
		if (err) {
			ERR_clear_error();
			snprintf(why, whylen, "%s",
				 err == -ETIMEDOUT ?
					 "the server did not complete the TLS handshake in time" :
				 err == -ECANCELED ? "the stop gave up" :
						     strerror(-err));
			goto fail;
		}
	}
	*out = ts;
	return 0;
fail:
	SSL_free(ts->ssl);
	free(ts);
	return err;
}

int tls_session_send(struct tls_session *ts, const char *p, size_t len, int stall_ms,
		     const volatile int *stop)
{
	while (len) {
		size_t n = 0;
		int ret = SSL_write_ex(ts->ssl, p, len, &n), e, err;

		if (ret == 1) {
			p += n;
			len -= n;
			continue;
		}
		e = SSL_get_error(ts->ssl, ret);
		if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
			err = wait_io(ts->fd, e, mono_ns() + (uint64_t)stall_ms * 1000000, stop);
			if (err)
				return err;
			continue;
		}
		ERR_clear_error();
		return e == SSL_ERROR_SYSCALL && errno ? -errno : -ECONNRESET;
	}
	return 0;
}

int tls_session_closed(struct tls_session *ts)
{
	char buf[4096];

	for (;;) {
		size_t n;
		int ret = SSL_read_ex(ts->ssl, buf, sizeof(buf), &n), e;

		if (ret == 1)
			continue; /* a syslog server sends nothing: dropped */
		e = SSL_get_error(ts->ssl, ret);
		ERR_clear_error();
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
			return 0;
		/* Closed with its close_notify, or not: a reset, or an end
		 * without it (a truncation, TLS says), whose error is read
		 * here, not left in SO_ERROR. */
		return e == SSL_ERROR_ZERO_RETURN ? 1 : -1;
	}
}

void tls_session_end(struct tls_session *ts)
{
	if (!ts)
		return;
	SSL_shutdown(ts->ssl); /* our close_notify; not waiting for theirs */
	ERR_clear_error();
	SSL_free(ts->ssl);
	free(ts);
}
