#!/usr/bin/env python3
"""SelectorForwarding from Python through ctypes: register a class, hook a method, throttle it
with a manual clock, forward a message. Finds the library through SF_LIBRARY (a path) or
pkg-config's libdir for selector-forwarding. expected.txt holds its output."""
import ctypes as C
import os
import subprocess
import sys


def load():
    path = os.environ.get("SF_LIBRARY")
    if not path:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "selector-forwarding"],
                                check=True, capture_output=True, text=True).stdout.strip()
        path = os.path.join(libdir, "libSelectorForwarding.so")
    return C.CDLL(path)


sf = load()
vp, cp, st = C.c_void_p, C.c_char_p, C.c_int


def fn(name, restype, *argtypes):
    f = getattr(sf, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


sel = fn("sf_sel_registerName", vp, cp)
sel_name = fn("sf_sel_getName", cp, vp)
last_error = fn("sf_last_error_message", cp)
allocate = fn("sf_allocateClassPair", vp, vp, cp)
register = fn("sf_registerClassPair", None, vp)
add_method = fn("sf_class_addMethod", st, vp, vp, vp, cp)
create = fn("sf_class_createInstance", vp, vp)
release = fn("sf_release", None, vp)
msg_send = fn("sf_msg_send", st, vp, vp, vp, C.POINTER(vp))
get_class = fn("sf_object_getClass", vp, vp)
instance_method = fn("sf_class_getInstanceMethod", vp, vp, vp)
# The encoding as the runtime's own pointer (not a Python copy): returned to the runtime.
method_types = C.CFUNCTYPE(vp, vp)(("sf_method_getTypeEncoding", sf))
method_name = fn("sf_method_getName", vp, vp)
copy_methods = fn("sf_class_copyMethodList", C.POINTER(vp), vp, C.POINTER(C.c_uint))
free_list = fn("sf_free", None, vp)

CALL_FN = C.CFUNCTYPE(st, vp, vp)
add_function = fn("sf_class_addMethodWithFunction", st, vp, vp, cp, CALL_FN, vp, vp)
get_arg = fn("sf_call_getArgument", st, vp, C.c_size_t, vp, C.c_size_t)
set_arg = fn("sf_call_setArgument", st, vp, C.c_size_t, vp, C.c_size_t)
set_ret = fn("sf_call_setReturnValue", st, vp, vp, C.c_size_t)
call_sel = fn("sf_call_getSelector", vp, vp)
proceed = fn("sf_call_proceed", st, vp)
hook = fn("sf_class_hookMethod", C.c_uint64, vp, vp, C.c_int, cp, CALL_FN, vp)
unhook = fn("sf_hook_remove", st, C.c_uint64)

clock_create = fn("sf_manual_clock_create", vp, C.c_uint64)
clock_advance = fn("sf_manual_clock_advance", st, vp, C.c_uint64)
clock_release = fn("sf_manual_clock_release", st, vp)
rule_create = fn("sf_rule_create", vp, vp, vp, C.c_int, C.c_uint64, C.c_uint32)
rule_clock = fn("sf_rule_setManualClock", st, vp, vp)
rule_apply = fn("sf_rule_apply", st, vp)
rule_discard = fn("sf_rule_discard", st, vp, C.c_int)
rule_release = fn("sf_rule_release", st, vp)

SIG_FN = C.CFUNCTYPE(vp, vp, vp, vp)  # returns const char *, kept as a pointer
FWD_FN = C.CFUNCTYPE(st, vp, vp)
set_signature = fn("sf_class_setMethodSignature", st, vp, SIG_FN, vp)
set_forward = fn("sf_class_setForwardInvocation", st, vp, FWD_FN, vp)
inv_sel = fn("sf_invocation_getSelector", vp, vp)
inv_invoke_with = fn("sf_invocation_invokeWithTarget", st, vp, vp)

SF_HOOK_BEFORE, SF_HOOK_INSTEAD = 0, 1
SF_THROTTLE_DEBOUNCE, SF_PENDING_CANCEL = 2, 0


def check(status, what):
    if status != 0:
        sys.exit(f"{what} failed: {last_error().decode()}")


def long_arg(call, i):
    v = C.c_long()
    check(get_arg(call, i, C.byref(v), 8), "sf_call_getArgument")
    return v.value


total = C.c_long(0)


@CALL_FN
def counter_add(call, _context):
    total.value += long_arg(call, 0)
    return set_ret(call, C.byref(total), 8)


pings = 0


@C.CFUNCTYPE(None, vp, vp)
def counter_ping(_self, _cmd):
    global pings
    pings += 1


@CALL_FN
def log_before(call, _context):
    print(f"before -{sel_name(call_sel(call)).decode()} {long_arg(call, 0)}")
    return 0


@CALL_FN
def double_it(call, _context):
    v = C.c_long(long_arg(call, 0) * 2)
    check(set_arg(call, 0, C.byref(v), 8), "sf_call_setArgument")
    return proceed(call)


def send_add(obj, amount):
    a, result = C.c_long(amount), C.c_long(0)
    args = (vp * 1)(C.cast(C.byref(a), vp))
    check(msg_send(obj, sel(b"add:"), C.byref(result), args), "sf_msg_send add:")
    return result.value


counter_class = allocate(None, b"Counter")
check(add_function(counter_class, sel(b"add:"), b"q@:q", counter_add, None, None), "add add:")
check(add_method(counter_class, sel(b"ping"), C.cast(counter_ping, vp), b"v@:"), "add ping")
register(counter_class)
counter = create(counter_class)
print(f"add: 5 -> {send_add(counter, 5)}")

count = C.c_uint()
methods = copy_methods(counter_class, C.byref(count))
print(f"Counter has {count.value} methods:", " ".join(sel_name(method_name(methods[i])).decode() for i in range(count.value)))
free_list(methods)

logged = hook(counter_class, sel(b"add:"), SF_HOOK_BEFORE, b"q@:q", log_before, None)
doubled = hook(counter_class, sel(b"add:"), SF_HOOK_INSTEAD, None, double_it, None)
print(f"hooked add: 5 -> {send_add(counter, 5)}")
check(unhook(doubled), "unhook")
check(unhook(logged), "unhook")
if unhook(logged) != 0:
    print("removing twice:", last_error().decode())
print(f"unhooked add: 1 -> {send_add(counter, 1)}")

clock = clock_create(0)
rule = rule_create(counter, sel(b"ping"), SF_THROTTLE_DEBOUNCE, 100_000_000, 0)
check(rule_clock(rule, clock), "sf_rule_setManualClock")
check(rule_apply(rule), "sf_rule_apply")
for _ in range(3):
    check(msg_send(counter, sel(b"ping"), None, None), "ping")
print(f"3 pings sent, {pings} ran")
check(clock_advance(clock, 100_000_000), "advance")
print(f"after 100 ms, {pings} ran")
check(rule_discard(rule, SF_PENDING_CANCEL), "discard")
check(rule_release(rule), "release")
check(clock_release(clock), "clock release")


@SIG_FN
def proxy_signature(_obj, s, _context):
    m = instance_method(get_class(counter), s)
    return method_types(m) if m else None


@FWD_FN
def proxy_forward(inv, _context):
    print(f"forwarding -{sel_name(inv_sel(inv)).decode()} to Counter")
    return inv_invoke_with(inv, counter)


proxy_class = allocate(None, b"Proxy")
register(proxy_class)
check(set_signature(proxy_class, proxy_signature, None), "sf_class_setMethodSignature")
check(set_forward(proxy_class, proxy_forward, None), "sf_class_setForwardInvocation")
proxy = create(proxy_class)
print(f"proxy add: 10 -> {send_add(proxy, 10)}")

release(proxy)
release(counter)
