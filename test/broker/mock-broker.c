/*
 * mock-broker: a Kafka-protocol test broker built from librdkafka's mock
 * cluster (librdkafka/rdkafka_mock.h).
 *
 *   mock-broker [--brokers N] [--topic NAME:PARTITIONS]...
 *
 * On start it prints exactly one line to stdout:
 *
 *   BOOTSTRAP host:port[,host:port...]
 *
 * then reads commands from stdin, one per line, and answers each with one
 * line, either "OK" or "ERR <CODE> <text>" (CODE is one token: the
 * librdkafka error name such as TOPIC_ALREADY_EXISTS or _UNKNOWN_BROKER, or
 * BAD_COMMAND / BAD_ARGS for malformed input):
 *
 *   topic NAME PARTITIONS         create a topic
 *   down ID                       rd_kafka_mock_broker_set_down
 *   up ID                         rd_kafka_mock_broker_set_up
 *   errors APIKEY ERRCODE COUNT   push COUNT copies of ERRCODE for APIKEY
 *   quit                          answer OK and exit
 *
 * It exits when stdin reaches EOF, so it dies with its parent.
 *
 * Build: cc -O2 -o build/mock-broker test/broker/mock-broker.c -lrdkafka
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static rd_kafka_mock_cluster_t *mcluster;
static int broker_cnt = 1;

/* librdkafka logs go to stderr, and only warnings and worse. */
static void log_cb(const rd_kafka_t *rk, int level, const char *fac,
                   const char *buf) {
        (void)rk;
        if (level <= 4)
                fprintf(stderr, "mock-broker: %s: %s\n", fac, buf);
}

static int parse_long(const char *s, long min, long max, long *out) {
        char *end;
        long v;
        if (!s || !*s)
                return -1;
        errno = 0;
        v     = strtol(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return -1;
        *out = v;
        return 0;
}

static int reply_ok(void) {
        if (fputs("OK\n", stdout) == EOF || fflush(stdout) == EOF)
                return -1;
        return 0;
}

static int reply_err(const char *code, const char *text) {
        if (fprintf(stdout, "ERR %s %s\n", code, text) < 0 ||
            fflush(stdout) == EOF)
                return -1;
        return 0;
}

static int reply_rderr(rd_kafka_resp_err_t err) {
        if (!err)
                return reply_ok();
        return reply_err(rd_kafka_err2name(err), rd_kafka_err2str(err));
}

static rd_kafka_resp_err_t create_topic(const char *name, int partitions) {
        /* The mock places replicas round-robin over the brokers; a
         * replication factor of N (all brokers) makes metadata look like a
         * real replicated cluster. Leadership never moves on its own. */
        return rd_kafka_mock_topic_create(mcluster, name, partitions,
                                          broker_cnt);
}

/* Handles one command line; returns 1 to quit, -1 on output failure. */
static int handle(char *line) {
        char *argv[8];
        int argc = 0;
        char *save = NULL, *tok;
        long a, b, c;

        for (tok = strtok_r(line, " \t\r\n", &save); tok && argc < 8;
             tok = strtok_r(NULL, " \t\r\n", &save))
                argv[argc++] = tok;

        if (argc == 0)
                return reply_err("BAD_COMMAND", "empty command");

        if (!strcmp(argv[0], "quit")) {
                reply_ok();
                return 1;
        }

        if (!strcmp(argv[0], "topic")) {
                if (argc != 3 || parse_long(argv[2], 1, 100000, &a))
                        return reply_err("BAD_ARGS",
                                         "usage: topic NAME PARTITIONS");
                return reply_rderr(create_topic(argv[1], (int)a));
        }

        if (!strcmp(argv[0], "down") || !strcmp(argv[0], "up")) {
                if (argc != 2 || parse_long(argv[1], -1, INT32_MAX, &a))
                        return reply_err("BAD_ARGS", "usage: down|up ID");
                if (argv[0][0] == 'd')
                        return reply_rderr(rd_kafka_mock_broker_set_down(
                            mcluster, (int32_t)a));
                return reply_rderr(
                    rd_kafka_mock_broker_set_up(mcluster, (int32_t)a));
        }

        if (!strcmp(argv[0], "errors")) {
                rd_kafka_resp_err_t *errs;
                long i;
                if (argc != 4 || parse_long(argv[1], 0, INT16_MAX, &a) ||
                    parse_long(argv[2], -1000, 10000, &b) ||
                    parse_long(argv[3], 1, 100000, &c))
                        return reply_err(
                            "BAD_ARGS", "usage: errors APIKEY ERRCODE COUNT");
                errs = malloc(sizeof(*errs) * (size_t)c);
                if (!errs)
                        return reply_err("NO_MEMORY", "out of memory");
                for (i = 0; i < c; i++)
                        errs[i] = (rd_kafka_resp_err_t)b;
                rd_kafka_mock_push_request_errors_array(mcluster, (int16_t)a,
                                                        (size_t)c, errs);
                free(errs);
                return reply_ok();
        }

        return reply_err("BAD_COMMAND", "unknown command");
}

static void usage(const char *prog) {
        fprintf(stderr,
                "usage: %s [--brokers N] [--topic NAME:PARTITIONS]...\n",
                prog);
        exit(2);
}

int main(int argc, char **argv) {
        rd_kafka_conf_t *conf;
        rd_kafka_t *rk;
        char errstr[512];
        char line[4096];
        int i, rc = 0;
        long v;

        signal(SIGPIPE, SIG_IGN);
#ifdef __linux__
        /* Belt and braces: stdin EOF already ends us when the parent dies. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--brokers") && i + 1 < argc) {
                        if (parse_long(argv[++i], 1, 64, &v))
                                usage(argv[0]);
                        broker_cnt = (int)v;
                } else if (!strcmp(argv[i], "--topic") && i + 1 < argc) {
                        i++; /* validated after the cluster exists */
                } else {
                        usage(argv[0]);
                }
        }

        conf = rd_kafka_conf_new();
        rd_kafka_conf_set_log_cb(conf, log_cb);
        if (rd_kafka_conf_set(conf, "log_level", "4", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK ||
            rd_kafka_conf_set(conf, "client.id", "mock-broker", errstr,
                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "mock-broker: conf: %s\n", errstr);
                return 1;
        }

        /* The handle is only needed for the mock cluster's book keeping. */
        rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
        if (!rk) {
                fprintf(stderr, "mock-broker: rd_kafka_new: %s\n", errstr);
                return 1;
        }

        mcluster = rd_kafka_mock_cluster_new(rk, broker_cnt);
        if (!mcluster) {
                fprintf(stderr, "mock-broker: failed to create mock cluster\n");
                rd_kafka_destroy(rk);
                return 1;
        }

        for (i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--topic")) {
                        char *spec = argv[++i];
                        char *colon = strrchr(spec, ':');
                        rd_kafka_resp_err_t err;
                        if (!colon || colon == spec ||
                            parse_long(colon + 1, 1, 100000, &v)) {
                                fprintf(stderr,
                                        "mock-broker: bad --topic %s "
                                        "(want NAME:PARTITIONS)\n",
                                        spec);
                                return 2;
                        }
                        *colon = '\0';
                        err    = create_topic(spec, (int)v);
                        if (err) {
                                fprintf(stderr,
                                        "mock-broker: create topic %s: %s\n",
                                        spec, rd_kafka_err2str(err));
                                return 1;
                        }
                } else if (!strcmp(argv[i], "--brokers")) {
                        i++;
                }
        }

        printf("BOOTSTRAP %s\n", rd_kafka_mock_cluster_bootstraps(mcluster));
        fflush(stdout);

        while (fgets(line, sizeof(line), stdin)) {
                int r = handle(line);
                if (r != 0) {
                        if (r < 0)
                                rc = 1;
                        break;
                }
        }

        /* rd_kafka_mock_cluster_destroy() + rd_kafka_destroy() take up to
         * ~1 s (thread poll intervals); there is no state worth tearing down
         * cleanly, so let the OS close the sockets. */
        fflush(stdout);
        _exit(rc);
}
