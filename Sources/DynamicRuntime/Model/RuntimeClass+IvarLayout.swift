import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Which pointer-sized words of an instance hold strong object ivars (`class_getIvarLayout`),
    /// in objc4's layout byte format: each byte's high nibble counts words to skip, its low
    /// nibble words that are strong, in order from the object's first word (the isa, always
    /// skipped); runs longer than 15 words take several bytes. Inherited ivars included; no
    /// terminating zero. Empty when the instances have no strong object ivars.
    public var ivarLayout: [UInt8] {
        Runtime.state.lock.withLock { Self.layout(of: objectIvarOffsets) }
    }

    /// The same for weak object ivars (`class_getWeakIvarLayout`).
    public var weakIvarLayout: [UInt8] {
        Runtime.state.lock.withLock { Self.layout(of: weakIvarOffsets) }
    }

    /// objc4's run-length bytes for the words at `offsets` (all pointer-aligned: object ivars
    /// take their type's natural alignment).
    static func layout(of offsets: [Int]) -> [UInt8] {
        let words = Set(offsets.map { $0 / MemoryLayout<UnsafeRawPointer>.size })
        guard let last = words.max() else { return [] }
        var bytes: [UInt8] = []
        var word = 0
        while word <= last {
            var skip = 0
            while !words.contains(word) { skip += 1; word += 1 }
            var scan = 0
            while words.contains(word) { scan += 1; word += 1 }
            while skip > 15 { bytes.append(0xF0); skip -= 15 }
            while scan > 15 { bytes.append(UInt8(skip << 4) | 0x0F); skip = 0; scan -= 15 }
            bytes.append(UInt8(skip << 4) | UInt8(scan))
        }
        return bytes
    }

    /// The layout as a NUL-terminated C string that lives as long as the class; NULL when empty.
    func cLayout(weak: Bool) -> UnsafePointer<UInt8>? {
        Runtime.state.lock.withLock {
            let bytes = Self.layout(of: weak ? weakIvarOffsets : objectIvarOffsets)
            guard !bytes.isEmpty else { return nil }
            let interned = cIvarLayouts ?? CIvarLayouts()
            cIvarLayouts = interned
            return interned.intern(bytes)
        }
    }
}

/// C copies of a class's layouts, kept for the class's life: a C caller holds them without a
/// reference count, and a layout changes only through `setSuperclass`.
final class CIvarLayouts {
    private var byBytes: [[UInt8]: UnsafeMutablePointer<UInt8>] = [:]

    func intern(_ bytes: [UInt8]) -> UnsafePointer<UInt8> {
        if let p = byBytes[bytes] { return UnsafePointer(p) }
        let p = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count + 1)
        p.initialize(from: bytes, count: bytes.count)
        p[bytes.count] = 0
        byBytes[bytes] = p
        return UnsafePointer(p)
    }

    deinit {
        for p in byBytes.values { p.deallocate() }
    }
}
