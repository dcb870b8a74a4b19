/*
 * SelectorForwarding — handle types, status codes and the thread's last error.
 * Part of the public C API: include <SelectorForwarding.h>.
 */
#ifndef SELECTOR_FORWARDING_TYPES_H
#define SELECTOR_FORWARDING_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sf_object *sf_id;                 /* any object, classes included */
typedef struct sf_class *sf_class_t;             /* a class or a metaclass */
typedef const struct sf_selector *sf_sel;        /* an interned selector */
typedef struct sf_method *sf_method_t;           /* a method-table entry */
typedef struct sf_ivar *sf_ivar_t;               /* an instance variable, valid while its class exists */
typedef void (*sf_imp)(void);                    /* cast to the method's real type before calling */
typedef struct sf_protocol *sf_protocol_t;       /* a protocol, immortal once allocated */

/* Error codes: the one list. Swift's RuntimeError.code maps each of its cases to one of these
 * constants (an exhaustive switch), so the two cannot drift apart. */
typedef enum sf_status {
    SF_OK = 0,
    SF_ERR_UNRECOGNIZED_SELECTOR = 1,
    SF_ERR_DUPLICATE_CLASS = 2,
    SF_ERR_BAD_ENCODING = 3,
    SF_ERR_SIGNATURE_MISMATCH = 4,
    SF_ERR_INVALID_ARGUMENT = 5,
    SF_ERR_CLASS_IN_USE = 6,
    SF_ERR_NIL_RECEIVER = 7,
    SF_ERR_METHOD_EXISTS = 8,
    SF_ERR_CLASS_REGISTERED = 9,
    SF_ERR_NO_SUCH_METHOD = 10,
    SF_ERR_RESERVED_SELECTOR = 11,
    SF_ERR_HOOK = 12,
    SF_ERR_FORWARDING = 13,
    SF_ERR_RULE = 14,               /* a throttle rule refused: applied twice, conflicting, target gone */
    SF_ERR_DUPLICATE_PROTOCOL = 20, /* a protocol of that name exists, or registered twice */
    SF_ERR_INCOMPATIBLE_CLASS = 21, /* sf_object_setClass / sf_class_setSuperclass refused */
} sf_status;

/* The last error recorded on this thread (SF_OK when the last fallible call succeeded). */
sf_status sf_last_error(void);
/* A message naming the class, selector and what was expected; valid until the next call. */
const char *sf_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif
