/* SPDX-License-Identifier: MIT */
/* What requests.c shares with the quota code beyond the public API. Nothing here is exported. */
#ifndef PP_REQUESTS_H
#define PP_REQUESTS_H

#include <stdbool.h>

/* validation.IsQualifiedName: [DNS-subdomain prefix/]name. */
bool pp__is_qualified_name(const char *s);

#endif
