/*
 * accel-run's profile lookup: a profile NAME is the file NAME.conf in the
 * first of these directories that has it:
 *   <dir of accel-run>/profiles              (a build tree: tools/profiles
 *                                             is copied there at build)
 *   <dir of accel-run>/../share/accel/profiles   (an install, relocatable)
 *   ACCEL_PROFILE_DIR                        (the configured install dir)
 * An argument containing '/' is a path to a user's file.
 */
#ifndef ACCEL_TOOLS_PROFILE_H
#define ACCEL_TOOLS_PROFILE_H

#include <stdio.h>

/**
 * The absolute path of the profile arg names (a NAME or a path), checked
 * with base_cfg_profile_check. Returns a malloc'd path, or NULL after one
 * line on stderr saying why (unknown name with the known ones, unreadable
 * file, or "PATH:LINE: ..." for a bad line).
 */
char *prof_resolve(const char *arg);

/** Print every installed profile name with its first comment line. */
void prof_list(FILE *f);

#endif /* ACCEL_TOOLS_PROFILE_H */
