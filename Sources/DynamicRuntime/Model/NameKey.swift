import Glibc

/// A selector or class name as its bytes, the way Objective-C runtimes compare names. Swift's
/// `String ==` is canonical equivalence ("caf\u{E9}" == "cafe\u{301}") and `String(cString:)`
/// replaces invalid UTF-8, so neither can key the name tables.
struct NameKey: Hashable, @unchecked Sendable {
    private enum Storage {
        /// Valid UTF-8: a `String` keeps its bytes as given.
        case text(String)
        /// A C name that is not valid UTF-8 (never equal to a `.text`).
        case bytes([UInt8])
    }
    private let storage: Storage

    init(_ name: String) { storage = .text(name) }

    /// The bytes up to the NUL.
    init(cString: UnsafePointer<CChar>) {
        if let s = String(validatingCString: cString) {
            storage = .text(s)
        } else {
            let n = strlen(cString)
            storage = .bytes(cString.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) })
        }
    }

    /// The name for messages (invalid UTF-8 shown as U+FFFD).
    var displayName: String {
        switch storage {
        case let .text(s): s
        case let .bytes(b): String(decoding: b, as: UTF8.self)
        }
    }

    /// A malloc'ed, NUL-terminated copy of the bytes.
    func cStringCopy() -> UnsafeMutablePointer<CChar> {
        switch storage {
        case let .text(s):
            return strdup(s)!
        case let .bytes(b):
            let p = malloc(b.count + 1)!.assumingMemoryBound(to: CChar.self)
            b.withUnsafeBufferPointer { src in
                UnsafeMutableRawPointer(p).copyMemory(from: src.baseAddress!, byteCount: b.count)
            }
            p[b.count] = 0
            return p
        }
    }

    /// Whether the name holds a NUL (possible only for a Swift string).
    var containsNUL: Bool {
        if case let .text(s) = storage { return s.utf8.contains(0) }
        return false
    }

    static func == (a: NameKey, b: NameKey) -> Bool {
        switch (a.storage, b.storage) {
        case let (.text(x), .text(y)): x.utf8.elementsEqual(y.utf8)
        case let (.bytes(x), .bytes(y)): x == y
        default: false
        }
    }

    func hash(into hasher: inout Hasher) {
        switch storage {
        case let .text(s):
            // Every `.text` hashes its bytes the same way, contiguous or not.
            if s.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
                Array(s.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
            }
        case let .bytes(b):
            b.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
