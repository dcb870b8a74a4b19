/*
 * SelectorForwarding — protocols (objc_allocateProtocol and friends).
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_PROTOCOLS_H
#define SELECTOR_FORWARDING_PROTOCOLS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Protocols, like objc_allocateProtocol & co. Allocate, add method descriptions and
 * incorporated protocols, then register; a registered protocol is immutable. Lists are
 * malloc'ed arrays the caller frees (NULL when empty); `outCount` may be NULL.
 */
typedef struct sf_method_description {
    sf_sel name;        /* NULL when not found */
    const char *types;  /* canonical encoding, valid for the life of the process */
} sf_method_description;

/* NULL (SF_ERR_DUPLICATE_PROTOCOL) when a protocol of that name exists or is being built. */
sf_protocol_t sf_allocateProtocol(const char *name);
/* SF_ERR_DUPLICATE_PROTOCOL when registered twice. */
sf_status sf_registerProtocol(sf_protocol_t proto);
sf_protocol_t sf_getProtocol(const char *name);
const char *sf_protocol_getName(sf_protocol_t proto);
/* Before registration only; SF_ERR_RESERVED_SELECTOR for dealloc, SF_ERR_BAD_ENCODING for bad
 * types, SF_ERR_METHOD_EXISTS when declared already. */
sf_status sf_protocol_addMethodDescription(sf_protocol_t proto, sf_sel name, const char *types,
                                           bool isRequiredMethod, bool isInstanceMethod);
/* `addition` must be registered; `proto` not yet. */
sf_status sf_protocol_addProtocol(sf_protocol_t proto, sf_protocol_t addition);
/* Searches incorporated protocols too; {NULL, NULL} when not declared. */
sf_method_description sf_protocol_getMethodDescription(sf_protocol_t proto, sf_sel sel,
                                                       bool isRequiredMethod, bool isInstanceMethod);
sf_method_description *sf_protocol_copyMethodDescriptionList(sf_protocol_t proto, bool isRequiredMethod,
                                                             bool isInstanceMethod, unsigned int *outCount);
sf_protocol_t *sf_protocol_copyProtocolList(sf_protocol_t proto, unsigned int *outCount);
bool sf_protocol_conformsToProtocol(sf_protocol_t proto, sf_protocol_t other);
sf_protocol_t *sf_copyProtocolList(unsigned int *outCount);
/* False when already adopted by this class (or on error: sf_last_error()). */
bool sf_class_addProtocol(sf_class_t cls, sf_protocol_t proto);
/* Through superclasses and incorporated protocols. */
bool sf_class_conformsToProtocol(sf_class_t cls, sf_protocol_t proto);
sf_protocol_t *sf_class_copyProtocolList(sf_class_t cls, unsigned int *outCount);
/* The class's answer, or what the object's own conformsToProtocol: (B@:^v) says: a
 * forwarding proxy answers for its target. */
bool sf_object_conformsToProtocol(sf_id obj, sf_protocol_t proto);

#ifdef __cplusplus
}
#endif

#endif
