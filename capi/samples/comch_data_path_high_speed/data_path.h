/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What softdpu's comch data path samples share (DOCA's comch_data_path_high_speed flow): the control
 * path's start/stop handshake and the peer's consumer id, and the two fast-path steps, each on a
 * progress engine of its own: receive one message with a consumer over a 1 MiB buffer, send the text
 * with a producer to the peer's consumer.
 */
#ifndef COMCH_DATA_PATH_H_
#define COMCH_DATA_PATH_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_comch.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#define DATA_PATH_SERVER_NAME "comch_data_path_sample_server"
#define START_MSG "start_data_path_test"
#define STOP_MSG "stop_data_path_test"
#define MAX_BUF_SIZE (1024 * 1024)
#define INVALID_CONSUMER_ID 0xffffu

struct data_path_control {
	struct doca_pe *pe;
	struct doca_comch_connection *conn;
	uint32_t remote_consumer_id;
	bool consumer_known, started, stopped;
	doca_error_t result;
};

/* Progresses the control engine (and `pe`, if not NULL) until *flag; TIME_OUT (logged, naming `what`) after 30 s. */
doca_error_t data_path_wait(struct data_path_control *control, struct doca_pe *pe, const bool *flag, const char *what);

/* Receives one message with a consumer of its own engine, and logs it. */
doca_error_t data_path_recv_msg(struct doca_dev *dev, struct data_path_control *control);

/*
 * Sends `text` with a producer of its own engine, once the peer announced its consumer. The text's bytes
 * are mapped in place, as NVIDIA's samples map theirs: they must be writable memory (the samples' flags
 * are on the stack of main), whatever the const says.
 */
doca_error_t data_path_send_msg(struct doca_dev *dev, struct data_path_control *control, const char *text);

/* The peer's consumer events (registered on the server or the client). */
void data_path_consumer_new(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id);
void data_path_consumer_expired(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id);

#endif /* COMCH_DATA_PATH_H_ */
