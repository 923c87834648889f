#define _GNU_SOURCE
#include <spawn.h>
#include "cspawn.h"

int relay_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
