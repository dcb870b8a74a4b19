import CDynamicRuntime
import DispatchFixtures
import DynamicRuntime
import Glibc

/// One memory figure of `forwarding bench`: heap bytes per object at scale, against a limit.
public struct MemoryMeasurement: Sendable {
    /// The case's id in docs/performance.md ("11c" …).
    public let id: String
    /// What is measured, as the report prints it.
    public let name: String
    /// How many objects were measured.
    public let objects: Int
    /// Growth of the heap in use (glibc's malloc chunks, headers included) per object.
    public let heapBytes: Double
    /// Growth of the resident set per object (pages; noisier, shown for reference).
    public let residentBytes: Double
    /// The most `heapBytes` may be for the target to be met.
    public let limit: Double
    /// Whether `heapBytes` is within `limit`.
    public var met: Bool { heapBytes <= limit }
}

/// Cases 11c-11e: what objects cost in memory, as a user keeps them: many instances of a
/// registered class with one closure method, held as raw `sf_id` pointers in a buffer
/// allocated before the first figure is taken.
public enum MemoryCases {
    /// The ids, names, limits and object counts, in report order.
    public static let cases: [(id: String, name: String, limit: Double, count: Int)] = [
        ("11c", "bytes per plain object", 32, 100_000),
        ("11d", "bytes per object with its own .before hook", 256, 100_000),
        ("11e", "bytes per object once its hook is removed again", 32, 100_000),
    ]

    /// Measures the cases whose ids are in `ids`, with `objects` objects each if given.
    public static func measure(ids: Set<String>, objects: Int? = nil) throws -> [MemoryMeasurement] {
        var result: [MemoryMeasurement] = []
        if ids.contains("11c") { result += try run(count: objects ?? cases[0].count, ids: ["11c"]) }
        let hooked = ids.intersection(["11d", "11e"])
        if !hooked.isEmpty { result += try run(count: objects ?? cases[1].count, ids: hooked) }
        return result
    }

    private static func run(count: Int, ids: Set<String>) throws -> [MemoryMeasurement] {
        let cls = try RuntimeClass(name: "BenchMemory_\(ids.sorted().joined())")
        let sel: Selector = "benchMemoryValue"
        try cls.addMethod(sel) { (_: ObjectRef) -> Int in 1 }
        let objects = UnsafeMutableBufferPointer<sf_id?>.allocate(capacity: count)
        objects.initialize(repeating: nil)
        var tokens: [HookToken] = []
        tokens.reserveCapacity(count)
        defer {
            for case let o? in objects { sf_release(o) }
            objects.deallocate()
        }
        // Warm the class (cache, first instance) so the figures count objects only.
        let warm = sf_class_createInstance(cls.raw)
        let _: Int = try ObjectRef(warm).send(sel)
        sf_release(warm)

        var result: [MemoryMeasurement] = []
        func figure(_ id: String, _ start: Footprint) {
            guard ids.contains(id), let spec = cases.first(where: { $0.id == id }) else { return }
            let now = Footprint()
            // To 0.1 B: a stray allocation of the run itself (a few bytes over all the objects)
            // is not an object's.
            let heap = (Double(now.heap - start.heap) / Double(count) * 10).rounded() / 10
            result.append(MemoryMeasurement(
                id: id, name: spec.name, objects: count,
                heapBytes: heap,
                residentBytes: Double(now.resident - start.resident) / Double(count), limit: spec.limit))
        }
        let empty = Footprint()
        for i in 0..<count { objects[i] = sf_class_createInstance(cls.raw) }
        figure("11c", empty)
        guard ids.contains("11d") || ids.contains("11e") else { return result }
        for case let o? in objects {
            tokens.append(try ObjectRef(o).hook(sel, .before) { _ in })
        }
        figure("11d", empty)
        for t in tokens { t.remove() }
        tokens.removeAll(keepingCapacity: true)
        figure("11e", empty)
        return result
    }
}

/// The heap in use and the resident set, now.
struct Footprint {
    let heap = Int(sfb_heap_in_use())
    let resident = Int(sfb_resident_bytes())
}
