#ifndef CLAWRELAY_CSPAWN_H
#define CLAWRELAY_CSPAWN_H

#include <spawn.h>

/// posix_spawn_file_actions_addchdir_np needs _GNU_SOURCE, which Swift's Glibc module does not set.
int relay_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path);

#endif
