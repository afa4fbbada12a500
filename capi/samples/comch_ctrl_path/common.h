/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What softdpu's comch samples share (the control path samples, and the data path ones, which build this
 * file too): their flags, the progress loop and main (devices.h, shared with the other samples, opens the
 * device and the representor). The flows are DOCA's (the samples of the Comch guide); the code is
 * softdpu's own.
 */
#ifndef COMCH_CTRL_PATH_COMMON_H_
#define COMCH_CTRL_PATH_COMMON_H_

#include <stdbool.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#include "devices.h"

#define SERVER_NAME "comch_ctrl_path_sample_server"
#define MAX_TEXT 4080
#define RECV_QUEUE_SIZE 10
#define SEND_TASKS 1024

struct sample_config {
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char rep_pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char text[MAX_TEXT + 1];
};

/* Registers -p, -t and (for the server) -r, starts argp for `program`; the defaults are DOCA's samples'. */
doca_error_t sample_flags(int argc, char **argv, const char *program, struct sample_config *cfg, bool server);

/*
 * A sample's main: the log backends (standard, and the SDK's on stderr at WARNING), the flags, then
 * `run`; EXIT_SUCCESS or EXIT_FAILURE, with DOCA's lines.
 */
int sample_main(int argc, char **argv, const char *program, bool server, doca_error_t (*run)(const struct sample_config *cfg));

/* Progresses until *finish, sleeping 10 us whenever a call finds nothing to do. */
void progress_until(struct doca_pe *pe, const bool *finish);

#endif /* COMCH_CTRL_PATH_COMMON_H_ */
