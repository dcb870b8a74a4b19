/*
 * SelectorForwarding — properties (objc_property_t, class_addProperty and friends).
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_PROPERTIES_H
#define SELECTOR_FORWARDING_PROPERTIES_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- properties (objc_property_t) ---- */

typedef struct sf_property *sf_property_t;      /* immortal once declared */
typedef struct sf_property_attribute {
    const char *name;   /* one character: T R C & N G S D W P V t */
    const char *value;  /* "" for flags */
} sf_property_attribute_t;

/* class_addProperty. False with SF_ERR_BAD_ENCODING for malformed attributes (no or a bad
 * type `T`, unknown names, a value on a flag, duplicates, C/&/W together…) or
 * SF_ERR_INVALID_ARGUMENT when the class already declares `name`. */
bool sf_class_addProperty(sf_class_t cls, const char *name, const sf_property_attribute_t *attributes,
                          unsigned int attributeCount);
/* The same from an attribute string such as "T@,&,N,V_name". */
bool sf_class_addPropertyWithAttributes(sf_class_t cls, const char *name, const char *attributes);
/* class_replaceProperty: replaces the attributes, or adds the property. */
sf_status sf_class_replaceProperty(sf_class_t cls, const char *name, const sf_property_attribute_t *attributes,
                                   unsigned int attributeCount);
/* Searches superclasses too; NULL when none. */
sf_property_t sf_class_getProperty(sf_class_t cls, const char *name);
/* The class's own properties (sf_free the array). */
sf_property_t *sf_class_copyPropertyList(sf_class_t cls, unsigned int *outCount);
const char *sf_property_getName(sf_property_t property);
/* Valid for the life of the process, also after sf_class_replaceProperty. */
const char *sf_property_getAttributes(sf_property_t property);
/* malloc'ed (free it); NULL when the property has no such attribute. */
char *sf_property_copyAttributeValue(sf_property_t property, const char *attributeName);
/* One allocation, strings included (sf_free). */
sf_property_attribute_t *sf_property_copyAttributeList(sf_property_t property, unsigned int *outCount);

#ifdef __cplusplus
}
#endif

#endif
