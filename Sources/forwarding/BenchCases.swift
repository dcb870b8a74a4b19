import CShims
import Dispatch
import DynamicRuntime

/// The shape of every measured method: `- (long)add:(long)a to:(long)b`, as a C function.
typealias AddIMP = @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int

/// The method body behind the floor and the C-function IMPs. A plain C-callable function, so
/// the floor is exactly what every send ends up calling.
let benchAdd: AddIMP = { _, _, a, b in a &+ b }

/// One measured case: `body(n)` makes `n` calls (per thread) and returns a checksum that keeps
/// the optimizer from dropping them.
struct BenchCase {
    /// The case's number in docs/performance.md ("1", "2b", "9d" …).
    let id: String
    let name: String
    /// Which ratio to the floor the case is held to, if any.
    var target: Double? = nil
    /// Threads that each make `n` calls; time is reported per thread.
    var threads = 1
    let body: (Int) throws -> Int
}

/// Classes, objects and selectors the cases send to, built once before timing starts.
final class BenchFixtures {
    let calc: RuntimeClass
    let object: Object
    let ref: ObjectRef
    let add: Selector = "add:to:"
    let closureAdd: Selector = "closureAdd:to:"
    let missing: Selector = "benchMissing:to:"
    /// The IMP of `add:to:` read back from the runtime: an opaque pointer to the optimizer.
    let floor: AddIMP
    /// Per selector count: an instance of a class with that many methods, all cached, and 64
    /// of its selectors spread over the table (repeated for small counts).
    var wide: [Int: (ref: ObjectRef, selectors: [Selector], keep: Object)] = [:]
    /// Per hierarchy depth: an instance of the leaf class; `add:to:` is defined on the root.
    var deep: [Int: (ref: ObjectRef, keep: Object)] = [:]

    static let selectorCounts = [10, 1_000, 100_000]
    static let depths = [1, 8, 32]

    init() throws {
        let imp = IMP(address: unsafeBitCast(benchAdd, to: UnsafeRawPointer.self))!
        calc = try RuntimeClass(name: "BenchCalc")
        try calc.addMethod(add, implementation: imp, types: "q@:qq")
        try calc.addMethod(closureAdd) { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        object = try calc.createInstance()
        ref = object.ref
        floor = unsafeBitCast(calc.method(for: add)!.implementation.pointer, to: AddIMP.self)

        for count in Self.selectorCounts {
            let cls = try RuntimeClass(name: "BenchWide\(count)")
            var all: [Selector] = []
            all.reserveCapacity(count)
            for i in 0..<count {
                let sel = Selector("wide\(count)_\(i):to:")
                try cls.addMethod(sel, implementation: imp, types: "q@:qq")
                all.append(sel)
            }
            let obj = try cls.createInstance()
            // Every method sent once: the class's cache holds all `count` selectors.
            for sel in all { let _: Int = try obj.ref.send(sel, 1, 2) }
            let hot = (0..<64).map { all[($0 * count / 64 + $0) % count] }
            wide[count] = (obj.ref, hot, obj)
        }

        for depth in Self.depths {
            var cls = try RuntimeClass(name: "BenchDeep\(depth)_0")
            try cls.addMethod(add, implementation: imp, types: "q@:qq")
            for level in 1..<depth {
                cls = try RuntimeClass(name: "BenchDeep\(depth)_\(level)", superclass: cls)
            }
            let obj = try cls.createInstance()
            let _: Int = try obj.ref.send(add, 1, 2)
            deep[depth] = (obj.ref, obj)
        }
    }

    /// The cases, in report order. Case 1 (the floor) comes first: ratios divide by it.
    func cases() -> [BenchCase] {
        let ref = ref, add = add, closureAdd = closureAdd, missing = missing, floor = floor
        var list: [BenchCase] = []

        list.append(BenchCase(id: "1", name: "direct call through a C function pointer (floor)") { n in
            var acc = 0
            for i in 0..<n { acc &+= floor(ref.raw, add.raw, i, 1) }
            return acc
        })

        // 2: the send layers, from the thinnest to the most general.
        list.append(BenchCase(id: "2a", name: "sf_msg_lookup + call (C API)", target: 3) { n in
            var acc = 0
            for i in 0..<n {
                let imp = unsafeBitCast(sf_msg_lookup(ref.raw, add.raw), to: AddIMP.self)
                acc &+= imp(ref.raw, add.raw, i, 1)
            }
            return acc
        })
        list.append(BenchCase(id: "2b", name: "typed send, C-function IMP", target: 5) { n in
            var acc = 0
            for i in 0..<n { let r: Int = try ref.send(add, i, 1); acc &+= r }
            return acc
        })
        list.append(BenchCase(id: "2c", name: "dynamic send (ffi_call)") { n in
            var acc = 0
            for i in 0..<n { acc &+= try ref.send(add, i, 1).intValue! }
            return acc
        })

        // 3: the same typed send when the IMP is a libffi closure over a Swift closure.
        list.append(BenchCase(id: "3a", name: "sf_msg_lookup + call, closure IMP") { n in
            var acc = 0
            for i in 0..<n {
                let imp = unsafeBitCast(sf_msg_lookup(ref.raw, closureAdd.raw), to: AddIMP.self)
                acc &+= imp(ref.raw, closureAdd.raw, i, 1)
            }
            return acc
        })
        list.append(BenchCase(id: "3b", name: "typed send, closure IMP") { n in
            var acc = 0
            for i in 0..<n { let r: Int = try ref.send(closureAdd, i, 1); acc &+= r }
            return acc
        })

        // Cases 4-6 (hooks: pass-through, drop, invocation capture and replay) go here once the
        // hook module lands; they are not measured yet.

        // 7: the miss path. Forwarding stages will be measured here when they land.
        list.append(BenchCase(id: "7a", name: "missing method: sf_msg_lookup -> NULL") { n in
            var acc = 0
            for _ in 0..<n { if sf_msg_lookup(ref.raw, missing.raw) == nil { acc &+= 1 } }
            return acc
        })
        list.append(BenchCase(id: "7b", name: "missing method: typed send throws, caught") { n in
            var acc = 0
            for i in 0..<n {
                do { let r: Int = try ref.send(missing, i, 1); acc &+= r } catch { acc &+= 1 }
            }
            return acc
        })

        // Case 8 (MessageThrottle: a throttled send, dropped and passed through) goes here once
        // the rule engine lands; it is not measured yet.

        // 9: the cached typed send as the runtime grows.
        for (count, letter) in zip(Self.selectorCounts, ["a", "b", "c"]) {
            let w = wide[count]!
            let wref = w.ref
            let sels = w.selectors
            list.append(BenchCase(id: "9" + letter, name: "typed send, \(count.formatted) selectors cached") { n in
                var acc = 0
                try sels.withUnsafeBufferPointer { s in
                    for i in 0..<n { let r: Int = try wref.send(s[i & 63], i, 1); acc &+= r }
                }
                return acc
            })
        }
        for (depth, letter) in zip(Self.depths, ["d", "e", "f"]) {
            let dref = deep[depth]!.ref
            list.append(BenchCase(id: "9" + letter, name: "typed send, hierarchy \(depth) deep") { n in
                var acc = 0
                for i in 0..<n { let r: Int = try dref.send(add, i, 1); acc &+= r }
                return acc
            })
        }
        for (threads, letter) in zip([1, 2], ["g", "h"]) {
            let name = "typed send, \(threads) thread\(threads == 1 ? "" : "s") (time per thread)"
            list.append(BenchCase(id: "9" + letter, name: name, threads: threads) { n in
                // Each thread writes only its own slot.
                nonisolated(unsafe) let sums = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
                defer { sums.deallocate() }
                DispatchQueue.concurrentPerform(iterations: threads) { t in
                    var acc = 0
                    for i in 0..<n {
                        let r: Int = (try? ref.send(add, i, 1)) ?? 0
                        acc &+= r
                    }
                    sums[t] = acc
                }
                return sums.reduce(0, &+)
            })
        }
        return list
    }
}

extension Int {
    /// 100000 → "100,000".
    var formatted: String {
        let digits = String(self)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}
