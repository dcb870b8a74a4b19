import CDynamicRuntime
import Dispatch
import DispatchFixtures
import DynamicRuntime
import MessageThrottle

/// One measured case. Its body, made for a set of fixtures (`body(for:)`), makes `n` calls
/// (per thread) and returns a checksum that keeps the optimizer from dropping them. Case ids
/// match docs/performance.md. The list is static so that the suite can register its
/// benchmarks without building the fixtures.
public struct BenchCase: @unchecked Sendable {
    /// Makes `n` calls and returns their checksum.
    public typealias Body = (Int) throws -> Int

    /// The case's number in docs/performance.md ("1", "2b", "9d" …).
    public let id: String
    /// What the case measures, as the report prints it.
    public let name: String
    /// The ratio to the floor (case 1) the case is held to, if any.
    public var target: Double? = nil
    /// The heap allocations per call the case is held to, if any.
    public var allocationTarget: Double? = nil
    /// Threads that each make `n` calls; time is reported per thread.
    public var threads = 1
    /// About 50 ns a call or more: the suite makes a thousand calls an iteration instead of a
    /// million.
    public var slow = false
    let make: (BenchFixtures) -> Body

    /// The case's loop over `fixtures`' objects (cheap: the fixtures are built already).
    public func body(for fixtures: BenchFixtures) -> Body { make(fixtures) }
}

extension BenchCase {
    /// The cases, in report order. Case 1 (the floor, from a Swift loop) comes first: ratios
    /// divide by it.
    public static let all: [BenchCase] = {
        var list: [BenchCase] = []

        // 1: the floor: the method's C function, called through a pointer.
        list.append(BenchCase(id: "1", name: "direct call through a C function pointer (floor)") { f in
            let floor = f.floor, obj = f.ref.raw, sel = f.add.raw
            return { n in
                var acc = 0
                for i in 0..<n { acc &+= floor(obj, sel, i, 1) }
                return acc
            }
        })
        list.append(BenchCase(id: "1c", name: "direct call, from a C loop") { f in
            let floor = f.floor, obj = f.ref.raw, sel = f.add.raw
            return { n in sfb_loop_direct(floor, obj, sel, n) }
        })

        // 2: the send layers, from the thinnest to the most general.
        list.append(BenchCase(id: "2a", name: "sf_msg_lookup + call (C API, C loop)", target: 3) { f in
            let obj = f.ref.raw, sel = f.add.raw
            return { n in sfb_loop_lookup_call(obj, sel, n) }
        })
        list.append(BenchCase(id: "2b", name: "typed send, C-function IMP", target: 5) { f in
            typedSends(f.ref, f.add)
        })
        list.append(BenchCase(id: "2c", name: "dynamic send -> DynamicValue", target: 40, allocationTarget: 0,
                              slow: true) { f in
            let ref = f.ref, add = f.add
            return { n in
                var acc = 0
                for i in 0..<n { acc &+= try ref.send(add, i, 1).intValue! }
                return acc
            }
        })
        // 2c's call with its arguments as `DynamicValue`s, each too big for an existential's
        // inline buffer: boxed on the heap by the caller.
        list.append(BenchCase(id: "2d", name: "dynamic send of DynamicValue arguments", slow: true) { f in
            let ref = f.ref, add = f.add
            return { n in
                var acc = 0
                for i in 0..<n { acc &+= try ref.send(add, DynamicValue.int64(Int64(i)), DynamicValue.int64(1)).intValue! }
                return acc
            }
        })

        // 3: the same sends when the IMP runs a Swift closure: a trampoline slot and a
        // register-class thunk (3a-3c), or a libffi closure (3d-3f, forced).
        list.append(BenchCase(id: "3a", name: "sf_msg_lookup + call, closure IMP (C loop)", target: 3,
                              allocationTarget: 0) { f in
            let obj = f.ref.raw, sel = f.closureAdd.raw
            return { n in sfb_loop_lookup_call(obj, sel, n) }
        })
        list.append(BenchCase(id: "3b", name: "typed send, closure IMP", target: 4, allocationTarget: 0) { f in
            typedSends(f.ref, f.closureAdd)
        })
        list.append(BenchCase(id: "3c", name: "closure IMP called through a pointer", allocationTarget: 0) { f in
            let imp = f.closureIMP, obj = f.ref.raw, sel = f.closureAdd.raw
            return { n in sfb_loop_direct(imp, obj, sel, n) }
        })
        list.append(BenchCase(id: "3d", name: "3a with a libffi closure (fallback)", slow: true) { f in
            let obj = f.ref.raw, sel = f.ffiClosureAdd.raw
            return { n in sfb_loop_lookup_call(obj, sel, n) }
        })
        list.append(BenchCase(id: "3e", name: "3b with a libffi closure (fallback)", slow: true) { f in
            typedSends(f.ref, f.ffiClosureAdd)
        })
        list.append(BenchCase(id: "3f", name: "3c with a libffi closure (fallback)", slow: true) { f in
            let imp = f.ffiClosureIMP, obj = f.ref.raw, sel = f.ffiClosureAdd.raw
            return { n in sfb_loop_direct(imp, obj, sel, n) }
        })

        // 4-6: hooked methods (typed sends to `hookedRef`; every method's body is sfb_add).
        // The rules run on a ManualClock that never moves: 5's and 6's windows, opened at
        // set-up, stay open, so every call is dropped (5) or replaces the pending one (6).
        list.append(BenchCase(id: "4a", name: "hook: instead-hook calling proceed()", target: 8, allocationTarget: 0,
                              slow: true) { f in
            typedSends(f.hookedRef, f.passHookAdd)
        })
        list.append(BenchCase(id: "4c", name: "hook: instead-hook calling proceed(), closure IMP", target: 8,
                              allocationTarget: 0, slow: true) { f in
            typedSends(f.hookedRef, f.passHookClosureAdd)
        })
        list.append(BenchCase(id: "4d", name: "4a through a libffi closure + ffi_call (fallback)", slow: true) { f in
            typedSends(f.hookedRef, f.ffiPassHookAdd)
        })
        list.append(BenchCase(id: "4b", name: "hook: pass-through rule (limiter, then original)", target: 15,
                              allocationTarget: 0, slow: true) { f in
            typedSends(f.hookedRef, f.passRuleAdd)
        })
        list.append(BenchCase(id: "5", name: "throttled: dropped (firstly, in the window)", target: 10,
                              allocationTarget: 0, slow: true) { f in
            typedSends(f.hookedRef, f.dropAdd)
        })
        list.append(BenchCase(id: "6a", name: "throttled: captured (last, in the window)", target: 20, allocationTarget: 0,
                              slow: true) { f in
            typedSends(f.hookedRef, f.lastAdd)
        })
        list.append(BenchCase(id: "6b", name: "throttled: captured (debounce, in the window)", target: 20, allocationTarget: 0,
                              slow: true) { f in
            typedSends(f.hookedRef, f.debounceAdd)
        })
        list.append(BenchCase(id: "6c", name: "throttled: swapped in (last, two targets)",
                              allocationTarget: 0, slow: true) { f in
            alternatingSends(f.swapObjects[0].ref, f.swapObjects[1].ref, f.lastSwapAdd)
        })

        // The same hook and rule paths installed through the C API (4f, 4g, 5c): they should
        // cost what 4a and 5 cost.
        list.append(BenchCase(id: "4f", name: "hook from C: instead-hook calling sf_call_proceed", allocationTarget: 0,
                              slow: true) { f in
            typedSends(f.hookedRef, f.cHookAdd)
        })
        list.append(BenchCase(id: "4g", name: "hook from C, sent from a C loop (sf_msg_lookup + call)",
                              allocationTarget: 0, slow: true) { f in
            let obj = f.hookedRef.raw, sel = f.cHookAdd.raw
            return { n in sfb_loop_lookup_call(obj, sel, n) }
        })
        list.append(BenchCase(id: "5c", name: "throttled from C: dropped (sf_rule_create firstly)", target: 10,
                              allocationTarget: 0, slow: true) { f in
            typedSends(f.hookedRef, f.cDropAdd)
        })

        // 7: the miss path: no method (7a, 7b), then the forwarding stages (7c-7e).
        list.append(BenchCase(id: "7a", name: "missing method: sf_msg_lookup -> NULL (C loop)", slow: true) { f in
            let obj = f.ref.raw, sel = f.missing.raw
            return { n in sfb_loop_lookup_missing(obj, sel, n) }
        })
        list.append(BenchCase(id: "7b", name: "missing method: typed send throws, caught", slow: true) { f in
            let ref = f.ref, missing = f.missing
            return { n in
                var acc = 0
                for i in 0..<n {
                    do { let r: Int = try ref.send(missing, i, 1); acc &+= r } catch { acc &+= 1 }
                }
                return acc
            }
        })

        list.append(BenchCase(id: "7c", name: "forwarded: forwardingTarget (fast forwarding)", target: 20, slow: true) { f in
            typedSends(f.targetForwarder.ref, f.add)
        })
        list.append(BenchCase(id: "7d", name: "forwarded: forwardInvocation, invoke on target", target: 50,
                              slow: true) { f in
            typedSends(f.invocationForwarder.ref, f.add)
        })
        list.append(BenchCase(id: "7e", name: "forwarded: Proxy (NSProxy-style) to target", target: 60, slow: true) { f in
            typedSends(f.proxy.ref, f.add)
        })

        // 8: changing hooks and rules. One "call" is a hook and its removal, or an apply and
        // a discard of the same Rule object.
        list.append(BenchCase(id: "8a", name: "hook + unhook one method", slow: true) { f in
            let cls = f.hooked, sel = f.toggleHookAdd, body = f.passThrough
            return { n in
                for _ in 0..<n { try cls.hook(sel, .instead, body).remove() }
                return n
            }
        })
        list.append(BenchCase(id: "8b", name: "apply + discard one rule", slow: true) { f in
            let engine = f.engine, rule = f.toggleRule
            return { n in
                var acc = 0
                for _ in 0..<n {
                    try engine.apply(rule)
                    if engine.discard(rule) { acc &+= 1 }
                }
                return acc
            }
        })

        list.append(BenchCase(id: "8c", name: "hook + unhook from C (sf_class_hookMethod, sf_hook_remove)", slow: true) { f in
            let cls = f.hooked.raw, sel = f.toggleCHookAdd.raw
            return { n in sfb_loop_hook_toggle(cls, sel, n) }
        })
        list.append(BenchCase(id: "8d", name: "apply + discard one rule from C (sf_rule_apply, sf_rule_discard)", slow: true) { f in
            let rule = f.toggleCRule
            return { n in sfb_loop_rule_toggle(rule, n) }
        })

        // 9: the cached typed send as the runtime grows.
        for (count, letter) in zip(BenchFixtures.selectorCounts, ["a", "b", "c"]) {
            list.append(BenchCase(id: "9" + letter, name: "typed send, \(grouped(count)) selectors cached") { f in
                let (ref, sels) = f.wide[count]!
                return { n in
                    var acc = 0
                    try sels.withUnsafeBufferPointer { s in
                        for i in 0..<n { let r: Int = try ref.send(s[i & 63], i, 1); acc &+= r }
                    }
                    return acc
                }
            })
        }
        for (depth, letter) in zip(BenchFixtures.depths, ["d", "e", "f"]) {
            list.append(BenchCase(id: "9" + letter, name: "typed send, hierarchy \(depth) deep") { f in
                typedSends(f.deep[depth]!, f.add)
            })
        }
        // Each thread makes all `n` calls; time is per call and thread, so 2 threads at the
        // 1-thread time is perfect scaling (only meaningful with a free second core).
        for (threads, letter) in zip([1, 2], ["g", "h"]) {
            let name = "typed send, \(threads) thread\(threads == 1 ? "" : "s") (time per thread)"
            list.append(BenchCase(id: "9" + letter, name: name, threads: threads) { f in
                let ref = f.ref, add = f.add
                return { n in
                    onThreads(threads) {
                        var acc = 0
                        for i in 0..<n {
                            let r: Int = (try? ref.send(add, i, 1)) ?? 0
                            acc &+= r
                        }
                        return acc
                    }
                }
            })
        }
        // The floor's call from 1 and 2 threads: it reads no shared data, so what 9j costs over
        // 9i is what two threads cost each other on this machine (two virtual CPUs of one core
        // share its execution units) — the baseline for 9h over 9g.
        for (threads, letter) in zip([1, 2], ["i", "j"]) {
            let name = "direct call, \(threads) thread\(threads == 1 ? "" : "s") (time per thread, nothing shared)"
            list.append(BenchCase(id: "9" + letter, name: name, threads: threads) { f in
                let floor = f.floor
                nonisolated(unsafe) let obj = f.ref.raw, sel = f.add.raw
                return { n in
                    onThreads(threads) {
                        var acc = 0
                        for i in 0..<n { acc &+= floor(obj, sel, i, 1) }
                        return acc
                    }
                }
            })
        }
        // 11: object costs. 11a: a retain and a release (the header's count word); 11b: a
        // per-object hook, to compare with the class-wide 4a. 11c-11e are MemoryCases.
        list.append(BenchCase(id: "11a", name: "sf_retain + sf_release (C loop)") { f in
            let obj = f.ref.raw!
            return { n in sfb_loop_retain_release(obj, n) }
        })
        list.append(BenchCase(id: "11b", name: "hook on one object: instead-hook calling proceed()", slow: true) { f in
            typedSends(f.ownHookObject.ref, f.ownHookAdd)
        })
        // 12: typed sends of six arguments (more than the registers after self and _cmd), to a
        // C function and to a Swift closure: the parameter-pack send, through libffi.
        list.append(BenchCase(id: "12a", name: "typed send, six arguments, C-function IMP", allocationTarget: 0) { f in
            sixArgumentSends(f.sixRef, f.sixAdd)
        })
        list.append(BenchCase(id: "12b", name: "typed send, six arguments, closure IMP", allocationTarget: 0) { f in
            sixArgumentSends(f.sixRef, f.closureSixAdd)
        })
        // 13: the sends of 2a-2b to a small object (tagged pointer): the class comes from the
        // pointer's tag rather than from memory.
        list.append(BenchCase(id: "13a", name: "sf_msg_lookup + call, small object (C API, C loop)", target: 3) { f in
            let obj = f.small.raw, sel = f.add.raw
            return { n in sfb_loop_lookup_call(obj, sel, n) }
        })
        list.append(BenchCase(id: "13b", name: "typed send to a small object, C-function IMP", target: 5,
                              allocationTarget: 0) { f in
            typedSends(f.small, f.add)
        })
        list.append(contentsOf: runLoopCases)
        return list
    }()
}

/// `n` typed sends of the six-argument sum `sel` to `ref`, summed.
private func sixArgumentSends(_ ref: ObjectRef, _ sel: Selector) -> BenchCase.Body {
    { n in
        var acc = 0
        for i in 0..<n { let r: Int = try ref.send(sel, i, 1, 2, 3, 4, 5); acc &+= r }
        return acc
    }
}

/// `n` typed sends of `sel` (`- (long)add:(long)a to:(long)b`) to `ref`, summed.
private func typedSends(_ ref: ObjectRef, _ sel: Selector) -> BenchCase.Body {
    { n in
        var acc = 0
        for i in 0..<n { let r: Int = try ref.send(sel, i, 1); acc &+= r }
        return acc
    }
}

/// Typed sends to `a` and `b` in turn.
private func alternatingSends(_ a: ObjectRef, _ b: ObjectRef, _ sel: Selector) -> BenchCase.Body {
    { n in
        var acc = 0
        for i in 0..<n { let r: Int = try (i & 1 == 0 ? a : b).send(sel, i, 1); acc &+= r }
        return acc
    }
}

/// 100000 → "100,000".
public func grouped(_ value: Int) -> String {
    let digits = String(value)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return out
}

/// Runs `body` on `threads` threads at once and sums what they return (each thread writes only
/// its own slot).
private func onThreads(_ threads: Int, _ body: @Sendable () -> Int) -> Int {
    nonisolated(unsafe) let sums = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
    defer { sums.deallocate() }
    DispatchQueue.concurrentPerform(iterations: threads) { t in sums[t] = body() }
    return sums.reduce(0, &+)
}
