import CShims
import Glibc

/// An interned method name: one id per name, process-wide, compared and hashed in O(1).
///
/// Create selectors once and keep them where a call is hot: `Selector("add:to:")` takes a lock
/// to intern the name. A string literal converts to a selector wherever one is expected.
public struct Selector: Hashable, @unchecked Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The C selector, usable with the C API.
    public let raw: sf_sel

    /// Interns `name` (thread-safe) and returns its selector.
    public init(_ name: String) {
        raw = SelectorTable.shared.intern(name)
    }

    /// Wraps a selector obtained from the C API.
    public init(raw: sf_sel) {
        self.raw = raw
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The selector's name, as it was registered.
    public var name: String { String(cString: raw.pointee.name) }

    /// The number of arguments the name implies (its colons), as in Objective-C.
    public var colonCount: Int { name.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: ":") ? 1 : 0) } }

    public var description: String { name }

    public static func == (a: Selector, b: Selector) -> Bool { a.raw == b.raw }
    public func hash(into hasher: inout Hasher) { hasher.combine(UnsafeRawPointer(raw)) }
}

/// The process-wide name table. Selectors are never freed, as in Objective-C.
final class SelectorTable: @unchecked Sendable {
    static let shared = SelectorTable()

    private let lock = RuntimeLock()
    private var byName: [String: sf_sel] = [:]
    private var count: UInt32 = 0

    func intern(_ name: String) -> sf_sel {
        lock.withLock {
            if let sel = byName[name] { return sel }
            let storage = UnsafeMutablePointer<sf_selector>.allocate(capacity: 1)
            count &+= 1
            // Spread consecutive ids over the cache's low bits (Fibonacci hashing).
            let hash = count &* 0x9E37_79B1
            storage.initialize(to: sf_selector(name: strdup(name), index: count, hash: (hash >> 16) ^ hash))
            let sel = sf_sel(storage)
            byName[name] = sel
            return sel
        }
    }

    func lookup(_ name: String) -> sf_sel? {
        lock.withLock { byName[name] }
    }

    var registeredCount: Int { lock.withLock { byName.count } }
}

@_cdecl("sf_sel_registerName")
func sf_sel_registerName_impl(_ name: UnsafePointer<CChar>?) -> sf_sel? {
    guard let name else {
        RuntimeError.invalidArgument(className: "-", selector: "-", reason: "selector name is NULL").record()
        return nil
    }
    return SelectorTable.shared.intern(String(cString: name))
}
