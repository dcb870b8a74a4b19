import CDynamicRuntime
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

    /// The selector named by a string literal (interned, like `init(_:)`).
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The selector's name, as it was registered.
    public var name: String { String(cString: raw.pointee.name) }

    /// The number of arguments the name implies (its colons), as in Objective-C.
    public var colonCount: Int { name.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: ":") ? 1 : 0) } }

    /// A readable form, for logs and test failures.
    public var description: String { name }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: Selector, b: Selector) -> Bool { a.raw == b.raw }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(UnsafeRawPointer(raw)) }
}
