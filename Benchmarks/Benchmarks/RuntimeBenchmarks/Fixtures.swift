import CShims
import DispatchFixtures
import DynamicRuntime

/// Classes, objects and selectors the benchmarks send to, built once per process (a benchmark's
/// setup touches `Fixtures.shared` so that building them is never timed).
final class Fixtures: @unchecked Sendable {
    static let shared = try! Fixtures()

    static let selectorCounts = [10, 1_000, 100_000]
    static let depths = [1, 8, 32]

    let calc: RuntimeClass
    let object: Object
    let ref: ObjectRef
    let add: Selector = "add:to:"
    let closureAdd: Selector = "closureAdd:to:"
    let missing: Selector = "benchMissing:to:"
    /// `sfb_add` read back from the runtime as the IMP of `add:to:`.
    let floor: sfb_add_imp
    /// Per selector count: an instance of a class with that many methods, all of them in its
    /// cache, and 64 of its selectors spread over the table (repeated for small counts).
    private(set) var wide: [Int: (ref: ObjectRef, selectors: [Selector])] = [:]
    /// Per hierarchy depth: an instance of the leaf class; `add:to:` is defined on the root.
    private(set) var deep: [Int: ObjectRef] = [:]
    /// Owning handles for the objects above.
    private var keep: [Object] = []

    private init() throws {
        let imp = IMP(address: unsafeBitCast(sfb_add as sfb_add_imp, to: UnsafeRawPointer.self))!
        calc = try RuntimeClass(name: "BenchCalc")
        try calc.addMethod(add, implementation: imp, types: "q@:qq")
        try calc.addMethod(closureAdd) { (_: ObjectRef, a: Int, b: Int) in a &+ b }
        object = try calc.createInstance()
        ref = object.ref
        floor = unsafeBitCast(calc.method(for: add)!.implementation.pointer, to: sfb_add_imp.self)
        // Warm the caches: every case measures a hit.
        let _: Int = try ref.send(add, 1, 2)
        let _: Int = try ref.send(closureAdd, 1, 2)

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
            for sel in all { let _: Int = try obj.ref.send(sel, 1, 2) }
            wide[count] = (obj.ref, (0..<64).map { all[($0 * count / 64 + $0) % count] })
            keep.append(obj)
        }

        for depth in Self.depths {
            var cls = try RuntimeClass(name: "BenchDeep\(depth)_0")
            try cls.addMethod(add, implementation: imp, types: "q@:qq")
            for level in 1..<depth {
                cls = try RuntimeClass(name: "BenchDeep\(depth)_\(level)", superclass: cls)
            }
            let obj = try cls.createInstance()
            let _: Int = try obj.ref.send(add, 1, 2)
            deep[depth] = obj.ref
            keep.append(obj)
        }
    }
}
