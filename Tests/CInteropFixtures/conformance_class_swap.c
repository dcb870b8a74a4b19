// Hooks living with class swapping from C: an object with hooks of its own whose class other
// code swaps KVO-style (sf_object_setClass to a subclass whose override calls super, or to an
// sf_duplicateClass copy), and an object swapped first and hooked after. Every hook keeps
// running; removing the hooks and restoring the class in either order leaves each party's
// state exact: the object's class, the IMP its sends reach, the classes' method tables.
#include "CInteropFixtures.h"

#include <stdint.h>
#include <string.h>

#include "conformance_check.h"

typedef int64_t (*cf_swap_fn)(sf_id, sf_sel, int64_t);

// The class whose override calls super: the super send starts at its superclass, as a
// compiled [super value:] would, never at the receiver's class.
static sf_class_t cf_swap_super;

// value: answers x + 1 on the base; the KVO subclass answers [super value:x*10] + 1000.
static int64_t cf_swap_base_value(sf_id self, sf_sel cmd, int64_t x) { (void)self, (void)cmd; return x + 1; }
static int64_t cf_swap_kvo_value(sf_id self, sf_sel cmd, int64_t x) {
    sf_imp super_imp = sf_msg_lookup_super(cf_swap_super, cmd);
    return super_imp ? ((cf_swap_fn)super_imp)(self, cmd, x * 10) + 1000 : -1;
}
static int64_t cf_swap_copy_value(sf_id self, sf_sel cmd, int64_t x) { (void)self, (void)cmd; return x + 500; }
static double cf_swap_double_value(sf_id self, sf_sel cmd, double x) { (void)self, (void)cmd; return x; }

// Which hooks ran, in order, as words separated by spaces.
typedef struct cf_swap_log { char text[256]; } cf_swap_log;

static void cf_swap_note(cf_swap_log *log, const char *word) {
    size_t used = strlen(log->text);
    snprintf(log->text + used, sizeof log->text - used, "%s%s", used ? " " : "", word);
}

static sf_status cf_swap_before(sf_call_t call, void *context) { (void)call; cf_swap_note(context, "before"); return SF_OK; }

static sf_status cf_swap_instead(sf_call_t call, void *context) {
    cf_swap_note(context, "instead");
    return sf_call_proceed(call);
}

// Adds 10000 to the answer.
static sf_status cf_swap_after(sf_call_t call, void *context) {
    cf_swap_note(context, "after");
    int64_t r;
    sf_status s = sf_call_getReturnValue(call, &r, sizeof r);
    if (s != SF_OK) return s;
    r += 10000;
    return sf_call_setReturnValue(call, &r, sizeof r);
}

// A class hook that notes the argument it saw ("class 10" through the override's super call).
static sf_status cf_swap_class_before(sf_call_t call, void *context) {
    int64_t x;
    sf_status s = sf_call_getArgument(call, 0, &x, sizeof x);
    if (s != SF_OK) return s;
    char word[32];
    snprintf(word, sizeof word, "class %lld", (long long)x);
    cf_swap_note(context, word);
    return SF_OK;
}

static sf_status cf_swap_class_after(sf_call_t call, void *context) { (void)call; cf_swap_note(context, "class after"); return SF_OK; }
static sf_status cf_swap_class_plain(sf_call_t call, void *context) { (void)call; cf_swap_note(context, "class"); return SF_OK; }

// The base with value:, and its KVO-style subclass whose override calls super.
static int cf_swap_make_pair(const char *name, sf_class_t *base, sf_class_t *kvo) {
    char n[256];
    snprintf(n, sizeof n, "%s.Base", name);
    *base = sf_allocateClassPair(NULL, n);
    CHECK(*base);
    sf_registerClassPair(*base);
    CHECK(sf_class_addMethod(*base, SEL("value:"), IMP(cf_swap_base_value), "q@:q") == SF_OK);
    snprintf(n, sizeof n, "%s.KVO", name);
    *kvo = sf_allocateClassPair(*base, n);
    CHECK(*kvo);
    sf_registerClassPair(*kvo);
    CHECK(sf_class_addMethod(*kvo, SEL("value:"), IMP(cf_swap_kvo_value), "q@:q") == SF_OK);
    cf_swap_super = *base;
    return 0;
}

// A pair named after `name` and an instance of its base: where most scenarios start.
static int cf_swap_open(const char *name, sf_class_t *base, sf_class_t *kvo, sf_id *o) {
    int line = cf_swap_make_pair(name, base, kvo);
    if (line) return line;
    *o = sf_class_createInstance(*base);
    CHECK(*o);
    return 0;
}

// The opening of such a scenario: declares `base`, `kvo`, `o`, an empty `log` and `line`.
#define CF_SWAP_OPEN(name)                            \
    sf_class_t base, kvo;                             \
    sf_id o;                                          \
    cf_swap_log log = { { 0 } };                      \
    int line = cf_swap_open((name), &base, &kvo, &o); \
    if (line) return line

// Disposes of the pair (neither may be in use by then) and releases the instance.
static int cf_swap_close(sf_id o, sf_class_t base, sf_class_t kvo) {
    CHECK(sf_disposeClassPair(kvo) == SF_OK);
    sf_release(o);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    return 0;
}

// The object's own hooks on value:: before, instead (proceeds), after (adds 10000).
static int cf_swap_hook_object(sf_id o, cf_swap_log *log, sf_hook_token tokens[3]) {
    tokens[0] = sf_object_hookMethod(o, SEL("value:"), SF_HOOK_BEFORE, "q@:q", cf_swap_before, log);
    tokens[1] = sf_object_hookMethod(o, SEL("value:"), SF_HOOK_INSTEAD, "q@:q", cf_swap_instead, log);
    tokens[2] = sf_object_hookMethod(o, SEL("value:"), SF_HOOK_AFTER, "q@:q", cf_swap_after, log);
    CHECK(tokens[0] && tokens[1] && tokens[2]);
    return 0;
}

// Swaps `o` from `base` to `kvo`, then gives it its own hooks.
static int cf_swap_swap_then_hook(sf_id o, sf_class_t base, sf_class_t kvo, cf_swap_log *log, sf_hook_token tokens[3]) {
    CHECK(sf_object_setClass(o, kvo) == base);
    return cf_swap_hook_object(o, log, tokens);
}

static int cf_swap_remove_all(sf_hook_token tokens[3]) {
    for (int i = 0; i < 3; i++) {
        CHECK(sf_hook_remove(tokens[i]) == SF_OK);
        CHECK(!sf_hook_isActive(tokens[i]));
    }
    return 0;
}

// [o value:1] through the looked-up IMP and through sf_msg_send: both must agree on the
// answer and on the hooks that ran (left in `log`); INT64_MIN when they do not or one fails.
static int64_t cf_swap_send(sf_id o, cf_swap_log *log) {
    int64_t x = 1, sent = -1;
    void *args[] = { &x };
    log->text[0] = 0;
    sf_imp imp = sf_msg_lookup(o, SEL("value:"));
    if (!imp) return INT64_MIN;
    int64_t called = ((cf_swap_fn)imp)(o, SEL("value:"), 1);
    if (sf_last_error() != SF_OK) return INT64_MIN;
    char ran[sizeof log->text];
    memcpy(ran, log->text, sizeof ran);
    log->text[0] = 0;
    if (sf_msg_send(o, SEL("value:"), &sent, args) != SF_OK) return INT64_MIN;
    if (sent != called || strcmp(ran, log->text) != 0) return INT64_MIN;
    return sent;
}

#define OUTCOME(o, value, ran) CHECK(cf_swap_send((o), &log) == (value) && strcmp(log.text, (ran)) == 0)

// The IMP of `cls`'s own value: entry (the method table, not a lookup).
static sf_imp cf_swap_table_imp(sf_class_t cls) {
    sf_method_t m = sf_class_getInstanceMethod(cls, SEL("value:"));
    return m ? sf_method_getImplementation(m) : NULL;
}

// Whether the object's sends go through an entry of its own (its hooks' private subclass)
// rather than its class's.
static bool cf_swap_has_own_entry(sf_id o) {
    return sf_object_getMethodImplementation(o, SEL("value:"))
        != sf_class_getMethodImplementation(sf_object_getClass(o), SEL("value:"));
}

// The end of a scenario whose object is back on `base`, its hooks removed and its KVO class
// disposed of: the object runs the base method's own IMP again, then it and `base` go.
static int cf_swap_finish_on_base(sf_id o, sf_class_t base, cf_swap_log *log) {
    CHECK(sf_object_getClass(o) == base);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_base_value));
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));
    CHECK(cf_swap_send(o, log) == 2 && strcmp(log->text, "") == 0);
    sf_release(o);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    return 0;
}

// Neither class's method table changes for the object's hooks or for the swap.
#define TABLES_ORIGINAL(base, kvo)                                                  \
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));                      \
    CHECK(cf_swap_table_imp(kvo) == IMP(cf_swap_kvo_value))

// ---- hooked first, then swapped ----

int cf_scenario_class_swap_hooked_then_hooks_removed(const char *name) {
    sf_class_t base, kvo;
    int line = cf_swap_make_pair(name, &base, &kvo);
    if (line) return line;
    cf_swap_log log = { { 0 } };
    sf_id o = sf_class_createInstance(base), plain = sf_class_createInstance(base);
    sf_hook_token tokens[3];
    if ((line = cf_swap_hook_object(o, &log, tokens))) return line;
    OUTCOME(o, 10002, "before instead after");

    CHECK(sf_object_setClass(o, kvo) == base);  // the visible class it replaced
    CHECK(sf_last_error() == SF_OK);
    CHECK(sf_object_getClass(o) == kvo);
    CHECK(cf_swap_has_own_entry(o));            // the hooks moved with it
    OUTCOME(o, 11011, "before instead after");  // the override ran (11 + 1000), after added 10000
    for (int i = 0; i < 3; i++) CHECK(sf_hook_isActive(tokens[i]));
    TABLES_ORIGINAL(base, kvo);
    OUTCOME(plain, 2, "");                      // another instance of the base: untouched
    CHECK(sf_object_getMethodImplementation(plain, SEL("value:")) == IMP(cf_swap_base_value));

    if ((line = cf_swap_remove_all(tokens))) return line;
    CHECK(sf_hook_remove(tokens[0]) == SF_ERR_INVALID_ARGUMENT);
    CHECK(sf_object_getClass(o) == kvo);        // the other code's class stays, exactly
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_kvo_value));
    OUTCOME(o, 1011, "");

    CHECK(sf_object_setClass(o, base) == kvo);
    CHECK(sf_object_getClass(o) == base);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_base_value));
    OUTCOME(o, 2, "");
    TABLES_ORIGINAL(base, kvo);
    CHECK(sf_disposeClassPair(kvo) == SF_OK);   // no instance or private subclass keeps it
    sf_release(o);
    sf_release(plain);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    return 0;
}

int cf_scenario_class_swap_hooked_then_class_restored(const char *name) {
    CF_SWAP_OPEN(name);
    sf_hook_token tokens[3];
    if ((line = cf_swap_hook_object(o, &log, tokens))) return line;
    CHECK(sf_object_setClass(o, kvo) == base);
    CHECK(sf_disposeClassPair(kvo) == SF_ERR_CLASS_IN_USE);  // the swapped object counts as the KVO class's

    CHECK(sf_object_setClass(o, base) == kvo);
    CHECK(sf_object_getClass(o) == base);
    CHECK(cf_swap_has_own_entry(o));
    OUTCOME(o, 10002, "before instead after");  // the hooks run, the override no more
    TABLES_ORIGINAL(base, kvo);
    CHECK(sf_disposeClassPair(kvo) == SF_OK);   // nothing of the hooks keeps the KVO class

    if ((line = cf_swap_remove_all(tokens))) return line;
    CHECK(!cf_swap_has_own_entry(o));
    return cf_swap_finish_on_base(o, base, &log);
}

int cf_scenario_class_swap_duplicate(const char *name) {
    char n[256];
    snprintf(n, sizeof n, "%s.Base", name);
    sf_class_t base = sf_allocateClassPair(NULL, n);
    CHECK(base);
    sf_registerClassPair(base);
    CHECK(sf_class_addMethod(base, SEL("value:"), IMP(cf_swap_base_value), "q@:q") == SF_OK);
    snprintf(n, sizeof n, "%s.Copy", name);
    sf_class_t copy = sf_duplicateClass(base, n, 0);
    CHECK(copy);
    CHECK(sf_class_replaceMethod(copy, SEL("value:"), IMP(cf_swap_copy_value), "q@:q") == IMP(cf_swap_base_value));
    cf_swap_log log = { { 0 } };
    sf_id o = sf_class_createInstance(base);
    sf_hook_token tokens[3];
    int line = cf_swap_hook_object(o, &log, tokens);
    if (line) return line;

    CHECK(sf_object_setClass(o, copy) == base);
    CHECK(sf_object_getClass(o) == copy);
    OUTCOME(o, 10501, "before instead after");
    CHECK(sf_object_setClass(o, base) == copy);
    CHECK(sf_object_getClass(o) == base);
    OUTCOME(o, 10002, "before instead after");
    CHECK(sf_object_setClass(o, copy) == base);
    CHECK(sf_hook_remove(tokens[1]) == SF_OK);
    OUTCOME(o, 10501, "before after");
    CHECK(sf_hook_remove(tokens[0]) == SF_OK && sf_hook_remove(tokens[2]) == SF_OK);
    CHECK(sf_object_getClass(o) == copy);
    CHECK(!cf_swap_has_own_entry(o));
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_copy_value));
    OUTCOME(o, 501, "");
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));
    CHECK(cf_swap_table_imp(copy) == IMP(cf_swap_copy_value));

    CHECK(sf_object_setClass(o, base) == copy);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_base_value));
    OUTCOME(o, 2, "");
    CHECK(sf_disposeClassPair(copy) == SF_OK);
    sf_release(o);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    return 0;
}

// A class that lacks a hooked method, or has it with other types, is refused: the hooks would
// have nothing to run around. Nothing changes.
int cf_scenario_class_swap_refused(const char *name) {
    char n[256], bare_name[256], other_name[256];
    snprintf(n, sizeof n, "%s.Base", name);
    sf_class_t base = sf_allocateClassPair(NULL, n);
    CHECK(base);
    sf_registerClassPair(base);
    CHECK(sf_class_addMethod(base, SEL("value:"), IMP(cf_swap_base_value), "q@:q") == SF_OK);
    snprintf(bare_name, sizeof bare_name, "%s.Bare", name);
    sf_class_t bare = sf_allocateClassPair(NULL, bare_name);
    CHECK(bare);
    sf_registerClassPair(bare);
    snprintf(other_name, sizeof other_name, "%s.OtherTypes", name);
    sf_class_t other = sf_allocateClassPair(NULL, other_name);
    CHECK(other);
    sf_registerClassPair(other);
    CHECK(sf_class_addMethod(other, SEL("value:"), IMP(cf_swap_double_value), "d@:d") == SF_OK);

    cf_swap_log log = { { 0 } };
    sf_id o = sf_class_createInstance(base);
    sf_hook_token tokens[3];
    int line = cf_swap_hook_object(o, &log, tokens);
    if (line) return line;
    sf_imp hooked = sf_object_getMethodImplementation(o, SEL("value:"));
    CHECK(hooked != IMP(cf_swap_base_value));

    CHECK(sf_object_setClass(o, bare) == NULL);
    CHECK(sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    const char *message = sf_last_error_message();
    CHECK(strstr(message, n) && strstr(message, bare_name) && strstr(message, "value:"));
    CHECK(strstr(message, "does not implement"));
    CHECK(sf_object_getClass(o) == base && sf_object_getMethodImplementation(o, SEL("value:")) == hooked);

    CHECK(sf_object_setClass(o, other) == NULL);
    CHECK(sf_last_error() == SF_ERR_INCOMPATIBLE_CLASS);
    message = sf_last_error_message();
    CHECK(strstr(message, n) && strstr(message, other_name) && strstr(message, "value:"));
    CHECK(strstr(message, "q@:q") && strstr(message, "d@:d"));
    CHECK(sf_object_getClass(o) == base && sf_object_getMethodImplementation(o, SEL("value:")) == hooked);

    OUTCOME(o, 10002, "before instead after");
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));
    CHECK(cf_swap_table_imp(other) == IMP(cf_swap_double_value));
    if ((line = cf_swap_remove_all(tokens))) return line;
    OUTCOME(o, 2, "");
    // No entry was left behind on the refused classes' private subclasses.
    CHECK(sf_disposeClassPair(bare) == SF_OK);
    CHECK(sf_disposeClassPair(other) == SF_OK);
    sf_release(o);
    CHECK(sf_disposeClassPair(base) == SF_OK);
    return 0;
}

// ---- swapped first, then hooked ----

int cf_scenario_class_swap_swapped_then_hooks_removed(const char *name) {
    CF_SWAP_OPEN(name);
    sf_hook_token tokens[3];
    if ((line = cf_swap_swap_then_hook(o, base, kvo, &log, tokens))) return line;
    CHECK(sf_object_getClass(o) == kvo);
    CHECK(cf_swap_has_own_entry(o));
    OUTCOME(o, 11011, "before instead after");  // the hooks and the override both ran
    TABLES_ORIGINAL(base, kvo);

    if ((line = cf_swap_remove_all(tokens))) return line;
    CHECK(sf_object_getClass(o) == kvo);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_kvo_value));
    OUTCOME(o, 1011, "");
    CHECK(sf_object_setClass(o, base) == kvo);
    CHECK(sf_object_getClass(o) == base);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_base_value));
    OUTCOME(o, 2, "");
    return cf_swap_close(o, base, kvo);
}

int cf_scenario_class_swap_swapped_then_class_restored(const char *name) {
    CF_SWAP_OPEN(name);
    sf_hook_token tokens[3];
    if ((line = cf_swap_swap_then_hook(o, base, kvo, &log, tokens))) return line;
    CHECK(sf_object_setClass(o, base) == kvo);  // the swapping code sees the class it installed
    CHECK(sf_object_getClass(o) == base);
    CHECK(cf_swap_has_own_entry(o));
    OUTCOME(o, 10002, "before instead after");
    CHECK(sf_disposeClassPair(kvo) == SF_OK);

    if ((line = cf_swap_remove_all(tokens))) return line;
    return cf_swap_finish_on_base(o, base, &log);
}

// ---- class hooks on the original class ----

int cf_scenario_class_swap_class_hooks(const char *name) {
    CF_SWAP_OPEN(name);
    sf_hook_token early = sf_class_hookMethod(base, SEL("value:"), SF_HOOK_BEFORE, "q@:q", cf_swap_class_before, &log);
    CHECK(early);
    CHECK(cf_swap_table_imp(base) != IMP(cf_swap_base_value));  // the entry now runs the hooks
    CHECK(sf_object_setClass(o, kvo) == base);
    sf_hook_token late = sf_class_hookMethod(base, SEL("value:"), SF_HOOK_AFTER, NULL, cf_swap_class_after, &log);
    CHECK(late);
    CHECK(cf_swap_table_imp(kvo) == IMP(cf_swap_kvo_value));
    // The override's super call reaches the hooked original.
    OUTCOME(o, 1011, "class 10 class after");

    sf_hook_token own[3];
    if ((line = cf_swap_hook_object(o, &log, own))) return line;
    OUTCOME(o, 11011, "before instead class 10 class after after");

    // The class restored, then the class hooks go, then the object's.
    CHECK(sf_object_setClass(o, base) == kvo);
    OUTCOME(o, 10002, "class 1 before instead class after after");
    CHECK(sf_hook_remove(early) == SF_OK && sf_hook_remove(late) == SF_OK);
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));  // restored exactly
    OUTCOME(o, 10002, "before instead after");
    if ((line = cf_swap_remove_all(own))) return line;
    CHECK(sf_object_getClass(o) == base);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_base_value));
    OUTCOME(o, 2, "");
    TABLES_ORIGINAL(base, kvo);
    return cf_swap_close(o, base, kvo);
}

int cf_scenario_class_swap_class_hooks_removed(const char *name) {
    CF_SWAP_OPEN(name);
    sf_hook_token token = sf_class_hookMethod(base, SEL("value:"), SF_HOOK_BEFORE, NULL, cf_swap_class_plain, &log);
    CHECK(token);
    CHECK(sf_object_setClass(o, kvo) == base);
    OUTCOME(o, 1011, "class");
    CHECK(sf_hook_remove(token) == SF_OK);
    CHECK(cf_swap_table_imp(base) == IMP(cf_swap_base_value));
    OUTCOME(o, 1011, "");
    CHECK(sf_object_getClass(o) == kvo);
    CHECK(sf_object_getMethodImplementation(o, SEL("value:")) == IMP(cf_swap_kvo_value));
    CHECK(sf_object_setClass(o, base) == kvo);
    OUTCOME(o, 2, "");
    TABLES_ORIGINAL(base, kvo);
    return cf_swap_close(o, base, kvo);
}
