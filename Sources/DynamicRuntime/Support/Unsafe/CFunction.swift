import CDynamicRuntime

/// Conversions between C function pointers, IMPs and code addresses: what a trampoline slot
/// is made from and what a send calls. The caller states the function type; these check only
/// that it is one pointer wide, so calling through the wrong type stays the caller's error.
/// Every such cast in the runtime goes through here.
@usableFromInline
enum CFunction {
    /// The code address of `function`, a `@convention(c)` function.
    @inlinable @inline(__always)
    static func address<F>(of function: F) -> UnsafeRawPointer {
        unsafeBitCast(function, to: UnsafeRawPointer.self)
    }

    /// The code address of `function` as a word (what the call path's atomics hold).
    @inlinable @inline(__always)
    static func bits<F>(of function: F) -> UInt { unsafeBitCast(function, to: UInt.self) }

    /// The function at `address`, as `type` (a `@convention(c)` function type).
    @inlinable @inline(__always)
    static func at<F>(_ address: UnsafeRawPointer, as type: F.Type) -> F { unsafeBitCast(address, to: type) }

    /// The function whose address is `bits` (not 0), as `type`.
    @inlinable @inline(__always)
    static func at<F>(bits: UInt, as type: F.Type) -> F { unsafeBitCast(bits, to: type) }

    /// `function` as another `@convention(c)` type: an IMP as the method's real type.
    @inlinable @inline(__always)
    static func cast<F, G>(_ function: F, to type: G.Type) -> G { unsafeBitCast(function, to: type) }

    /// Whether two functions (of any `@convention(c)` type) are the same code.
    @inlinable @inline(__always)
    static func same<F, G>(_ f: F, _ g: G) -> Bool { bits(of: f) == bits(of: g) }
}
