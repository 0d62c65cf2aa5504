/* schedvalidate: running a helper program (ncu, sha256sum) and reading its output. */
#ifndef SV_PROC_H
#define SV_PROC_H
#include <stddef.h>

/* Runs argv[0] (searched in PATH) with stdout captured into *out (NUL-terminated, malloc'ed)
   and stderr passed through (or discarded when quiet). Kills it after timeout_s seconds (0 = no
   limit). Returns the exit status (0-255), 128+signal when killed by one, 124 on timeout, or -1
   when it could not be started. */
int sv_capture(char *const argv[], int timeout_s, int quiet, char **out, size_t *len);
#endif
