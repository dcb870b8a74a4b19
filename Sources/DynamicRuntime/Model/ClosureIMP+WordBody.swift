import CDynamicRuntime

// Closure methods whose arguments all travel in integer registers: the typed overloads erase
// the closure to a `WordBody`; a slot jumps to a `@convention(c)` thunk per register count and
// return register, which calls it with the registers as they arrived (no argument vector), and
// typed sends call it directly (`MessageSend.closureWords`).

extension ClosureIMP {
    /// A throw from the word body: names the method as `run` does (the class read before the
    /// body ran, which may have freed the receiver), records it for C and returns it.
    @usableFromInline
    static func failure(_ error: any Error, receiverClass cls: sf_class_t?, _ sel: UInt64) -> RuntimeError {
        failure(error, className: cls.map { String(cString: sf_class_getName($0)) }, sel)
    }

    /// A throw from a body called through its IMP, naming the method's owner.
    static func failure(_ error: any Error, className: String?, _ sel: UInt64) -> RuntimeError {
        let e: RuntimeError
        if let r = error as? RuntimeError {
            e = r
        } else {
            let selector = Selector(raw: sf_sel(bitPattern: UInt(sel))!)
            e = .implementationFailed(.init(className: className, selector: selector.name, underlying: error))
        }
        e.record()
        return e
    }

    /// The receiver's visible class, read before a body runs (see `Runtime.receiverClass`).
    @inlinable @inline(__always)
    static func receiverClass(_ raw: UInt64) -> sf_class_t? {
        guard let obj = sf_id(bitPattern: UInt(raw)) else { return nil }
        return sf_class_visible(sf_object_isa(obj))
    }
}

/// Runs the word body for a call from C: an error goes to the sender as a pending error and
/// the caller gets zero, as with the generic entry.
@inline(__always)
private func callWordBody(_ owner: UnsafeRawPointer, _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64,
                          _ a4: UInt64) -> UInt64 {
    ObjectWord<ClosureIMP>(owner).withObject { box in
        do {
            return try box.wordBody(a0, a1, a2, a3, a4, 0)
        } catch {
            raiseWordFailure(error, box.ownerName, a1)
            return 0
        }
    }
}

/// Out of line, so that the thunks keep a small frame.
@inline(never)
func raiseWordFailure(_ error: any Error, _ className: String?, _ sel: UInt64) {
    Runtime.raise(ClosureIMP.failure(error, className: className, sel))
}

// Written by scripts/generate-register-thunks.py (wordThunks): edit the script, not these lines.
/// Thunks by register count (2-5: receiver, selector, up to three arguments), for integer,
/// double and float returns; the slot puts this object in the next integer register.
nonisolated(unsafe) private let wordThunks: [[UnsafeRawPointer]] = [
    [
        CFunction.address(of: { (a0, a1, c) in
            callWordBody(c!, a0, a1, 0, 0, 0)
        } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
        CFunction.address(of: { (a0, a1, a2, c) in
            callWordBody(c!, a0, a1, a2, 0, 0)
        } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
        CFunction.address(of: { (a0, a1, a2, a3, c) in
            callWordBody(c!, a0, a1, a2, a3, 0)
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
        CFunction.address(of: { (a0, a1, a2, a3, a4, c) in
            callWordBody(c!, a0, a1, a2, a3, a4)
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64),
    ],
    [
        CFunction.address(of: { (a0, a1, c) in
            Double(bitPattern: callWordBody(c!, a0, a1, 0, 0, 0))
        } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> Double),
        CFunction.address(of: { (a0, a1, a2, c) in
            Double(bitPattern: callWordBody(c!, a0, a1, a2, 0, 0))
        } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Double),
        CFunction.address(of: { (a0, a1, a2, a3, c) in
            Double(bitPattern: callWordBody(c!, a0, a1, a2, a3, 0))
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Double),
        CFunction.address(of: { (a0, a1, a2, a3, a4, c) in
            Double(bitPattern: callWordBody(c!, a0, a1, a2, a3, a4))
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Double),
    ],
    [
        CFunction.address(of: { (a0, a1, c) in
            Float(bitPattern: UInt32(truncatingIfNeeded: callWordBody(c!, a0, a1, 0, 0, 0)))
        } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> Float),
        CFunction.address(of: { (a0, a1, a2, c) in
            Float(bitPattern: UInt32(truncatingIfNeeded: callWordBody(c!, a0, a1, a2, 0, 0)))
        } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Float),
        CFunction.address(of: { (a0, a1, a2, a3, c) in
            Float(bitPattern: UInt32(truncatingIfNeeded: callWordBody(c!, a0, a1, a2, a3, 0)))
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Float),
        CFunction.address(of: { (a0, a1, a2, a3, a4, c) in
            Float(bitPattern: UInt32(truncatingIfNeeded: callWordBody(c!, a0, a1, a2, a3, a4)))
        } as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> Float),
    ],
]
// End of wordThunks.

/// The thunk for a signature of `nargs` integer-register arguments (2-5) returning `returns`.
func wordThunk(nargs: Int, returns: TypeEncoding) -> UnsafeRawPointer {
    let row = returns == .double ? 1 : returns == .float ? 2 : 0
    return wordThunks[row][nargs - 2]
}

// MARK: - Building word bodies (the typed overloads)

extension MessageArgument {
    /// Reads an argument that arrived in an integer register, refusing a NULL the type cannot
    /// hold (as `argument(_:_:)` does for the vector).
    @inlinable @inline(__always)
    static func fromWord(_ w: UInt64, receiver: UInt64, selector: UInt64, _ index: Int) throws(RuntimeError) -> Self {
        if !acceptsNull, w == 0 { throw nullWordError(receiver: receiver, selector: selector, index) }
        return withUnsafeBytes(of: w) { Self(argumentStorage: $0.baseAddress!) }
    }

    @usableFromInline
    static func nullWordError(receiver: UInt64, selector: UInt64, _ index: Int) -> RuntimeError {
        var words = (receiver, selector)
        return withUnsafeMutableBytes(of: &words) { b in
            var argv: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) = (b.baseAddress!, b.baseAddress! + 8)
            return withUnsafeMutablePointer(to: &argv) {
                $0.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 2) { nullArgumentError($0, index) }
            }
        }
    }
}

extension MessageReturn {
    /// The value as its return register holds it: integers widened to 32 bits as C callers
    /// expect and libffi's closures do (signed char and short sign-extended), a double's or
    /// float's bits.
    @inlinable @inline(__always)
    var returnWord: UInt64 {
        var w: UInt64 = 0
        withUnsafeMutableBytes(of: &w) { storeReturn(to: $0.baseAddress!) }
        switch Self.returnEncoding {
        case .int8: return UInt64(UInt32(bitPattern: Int32(Int8(truncatingIfNeeded: w))))
        case .int16: return UInt64(UInt32(bitPattern: Int32(Int16(truncatingIfNeeded: w))))
        default: return w
        }
    }
}
