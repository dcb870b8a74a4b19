import CDynamicRuntime

// Closure methods of `Int` arguments returning `Int` (the `@IntMethodBody` overloads): the
// closure is kept at its own type, so the slot's thunk and typed sends call it directly. A
// closure that went through a generic overload is stored at maximal abstraction: every call
// pays a word body and a reabstraction thunk on top (ClosureIMP+WordBody.swift).

/// An `Int` body of no argument, at its natural abstraction.
@usableFromInline
final class IntMethodBody0: Sendable {
    @usableFromInline let body: @Sendable (ObjectRef) throws -> Int
    @usableFromInline init(_ body: @escaping @Sendable (ObjectRef) throws -> Int) { self.body = body }
}

/// An `Int` body of one `Int` argument.
@usableFromInline
final class IntMethodBody1: Sendable {
    @usableFromInline let body: @Sendable (ObjectRef, Int) throws -> Int
    @usableFromInline init(_ body: @escaping @Sendable (ObjectRef, Int) throws -> Int) { self.body = body }
}

/// An `Int` body of two `Int` arguments.
@usableFromInline
final class IntMethodBody2: Sendable {
    @usableFromInline let body: @Sendable (ObjectRef, Int, Int) throws -> Int
    @usableFromInline init(_ body: @escaping @Sendable (ObjectRef, Int, Int) throws -> Int) { self.body = body }
}

/// An `Int` body of three `Int` arguments.
@usableFromInline
final class IntMethodBody3: Sendable {
    @usableFromInline let body: @Sendable (ObjectRef, Int, Int, Int) throws -> Int
    @usableFromInline init(_ body: @escaping @Sendable (ObjectRef, Int, Int, Int) throws -> Int) { self.body = body }
}

/// An `Int` body of four `Int` arguments (six registers: typed sends only; C callers take the
/// spill entry, no register being left for the context).
@usableFromInline
final class IntMethodBody4: Sendable {
    @usableFromInline let body: @Sendable (ObjectRef, Int, Int, Int, Int) throws -> Int
    @usableFromInline init(_ body: @escaping @Sendable (ObjectRef, Int, Int, Int, Int) throws -> Int) { self.body = body }
}

/// One of the `IntMethodBody` boxes and its argument count, as the overloads hand it over.
@usableFromInline
struct DirectIntBody {
    let box: AnyObject
    let arity: Int
    /// The closure cannot throw (a non-throwing overload took it): C callers then reach it
    /// through `sf_tramp_int_nothrow<n>`, which neither reads the receiver's class beforehand
    /// nor checks for an error afterwards.
    let nonThrowing: Bool

    @usableFromInline init(box: AnyObject, arity: Int, nonThrowing: Bool = false) {
        self.box = box
        self.arity = arity
        self.nonThrowing = nonThrowing
    }

    /// The box's one stored property, the closure at its own type: its two words are a
    /// `struct sf_swift_closure` (function, context), which the non-throwing thunks call.
    var closureWords: UnsafeMutablePointer<sf_swift_closure> { ClosureWords.of(box) }

    /// The closure's function when it has no context (it captures nothing), else nil: such a
    /// closure's slot drops the selector and jumps to the function itself (`SF_TRAMP_DROP<n>`).
    var contextFreeFunction: UnsafeMutableRawPointer? {
        let words = closureWords.pointee
        return words.context == nil ? UnsafeMutableRawPointer(mutating: words.function) : nil
    }
}

extension ClosureIMP {
    /// Calls the `Int` body `direct` (an `IntMethodBody<arity>`) with the argument words, for a
    /// typed send whose key matched the method's (so `arity` is the send's argument count).
    @inlinable @inline(__always)
    static func callDirect(_ direct: UnsafeRawPointer, arity: Int, _ o: UInt64,
                           _ w: (UInt64, UInt64, UInt64, UInt64)) throws -> UInt64 {
        let me = ObjectRef(word: o)
        let r: Int
        switch arity {
        case 0: r = try ObjectWord<IntMethodBody0>(direct).withObject { try $0.body(me) }
        case 1: r = try ObjectWord<IntMethodBody1>(direct).withObject { try $0.body(me, Int(bitPattern: UInt(w.0))) }
        case 2:
            r = try ObjectWord<IntMethodBody2>(direct).withObject {
                try $0.body(me, Int(bitPattern: UInt(w.0)), Int(bitPattern: UInt(w.1)))
            }
        case 3:
            r = try ObjectWord<IntMethodBody3>(direct).withObject {
                try $0.body(me, Int(bitPattern: UInt(w.0)), Int(bitPattern: UInt(w.1)), Int(bitPattern: UInt(w.2)))
            }
        default:
            r = try ObjectWord<IntMethodBody4>(direct).withObject {
                try $0.body(me, Int(bitPattern: UInt(w.0)), Int(bitPattern: UInt(w.1)), Int(bitPattern: UInt(w.2)),
                            Int(bitPattern: UInt(w.3)))
            }
        }
        return UInt64(UInt(bitPattern: r))
    }
}

/// A throwing `Int` body's error, from its C thunk (`tramp_int.c`): the thunk hands over the
/// error it owns and the closure words it called, which name the method's owner; the error
/// goes to the sender as a pending error (the caller gets zero), as a word body's does.
private let intBodyFailure: sf_tramp_int_failure_fn = { error, closure, sel in
    guard var word = error else { return }
    let e = withUnsafeMutablePointer(to: &word) { $0.withMemoryRebound(to: (any Error).self, capacity: 1) { $0.move() } }
    raiseWordFailure(e, closure.flatMap { IntBodyOwners.name(UnsafeRawPointer($0)) }, UInt64(UInt(bitPattern: sel)))
}

/// The owners' names of throwing `Int` bodies, by the address of their closure words: what
/// their C thunks know of them. Read only when a body throws.
enum IntBodyOwners {
    /// A leaf, so the fork handlers take it.
    nonisolated(unsafe) static let names: Locked<[UnsafeRawPointer: String]> = {
        let lock = Locked<[UnsafeRawPointer: String]>([:])
        ForkSafety.register(lock)
        return lock
    }()

    static func add(_ words: UnsafeRawPointer, _ name: String) { names.withLock { $0[words] = name } }
    static func remove(_ words: UnsafeRawPointer) { _ = names.withLock { $0.removeValue(forKey: words) } }
    static func name(_ words: UnsafeRawPointer) -> String? { names.withLock { $0[words] } }
}

/// Installs `intBodyFailure` once, before the first throwing `Int` slot is made.
private let intBodyFailureInstalled: Void = sf_tramp_set_int_failure(intBodyFailure)

/// The thunks of throwing `Int` bodies by argument count (0-3), in `tramp_int.c`.
nonisolated(unsafe) private let intThunks: [UnsafeRawPointer] = [
    CFunction.address(of: sf_tramp_int_throwing0 as @convention(c) (sf_id?, sf_sel?, UnsafePointer<sf_swift_closure>?) -> Int),
    CFunction.address(of: sf_tramp_int_throwing1 as @convention(c) (sf_id?, sf_sel?, Int, UnsafePointer<sf_swift_closure>?) -> Int),
    CFunction.address(of: sf_tramp_int_throwing2 as @convention(c) (sf_id?, sf_sel?, Int, Int, UnsafePointer<sf_swift_closure>?) -> Int),
    CFunction.address(of: sf_tramp_int_throwing3
                      as @convention(c) (sf_id?, sf_sel?, Int, Int, Int, UnsafePointer<sf_swift_closure>?) -> Int),
]

/// The thunk for a throwing `Int` body of `arity` arguments (0-3); its slot's context is the
/// closure's own words (`DirectIntBody.closureWords`).
func intThunk(arity: Int) -> UnsafeRawPointer {
    _ = intBodyFailureInstalled
    return intThunks[arity]
}

/// The thunks for non-throwing `Int` bodies (0-3 arguments), in `tramp_x86_64.S`.
nonisolated(unsafe) private let nonThrowingIntThunks: [UnsafeRawPointer] = [
    CFunction.address(of: sf_tramp_int_nothrow0 as @convention(c) () -> Void),
    CFunction.address(of: sf_tramp_int_nothrow1 as @convention(c) () -> Void),
    CFunction.address(of: sf_tramp_int_nothrow2 as @convention(c) () -> Void),
    CFunction.address(of: sf_tramp_int_nothrow3 as @convention(c) () -> Void),
]

/// The thunk for a non-throwing `Int` body of `arity` arguments (0-3).
func nonThrowingIntThunk(arity: Int) -> UnsafeRawPointer { nonThrowingIntThunks[arity] }

/// Whether the `Int` bodies' C thunks can call a closure from the two words they read out of
/// its box. Swift does not promise that layout (a thick function stored as function, context
/// at the box's first stored property), so it is checked once: the words' shape (a closure
/// that captures nothing has no context), then a call of probe closures through both thunk
/// kinds against Swift's own call. Where it fails, `ClosureIMP` does not take the direct `Int`
/// path and the word body serves those methods instead.
enum IntBodyLayout {
    static let holds: Bool = probe()

    private static func probe() -> Bool {
        guard MemoryLayout<@Sendable (ObjectRef, Int, Int) throws -> Int>.size == MemoryLayout<sf_swift_closure>.size
        else { return false }
        let k = Int.random(in: 1...1_000)
        let captureFree = IntMethodBody2({ _, a, b in a &- b })
        let throwing = IntMethodBody2({ _, a, b in a &* 31 &+ b &+ k })
        let nonThrowing = IntMethodBody2({ _, a, b in a &* 17 &- b &+ k })
        let free = words(captureFree).pointee
        guard free.function != nil, free.context == nil else { return false }
        for box in [throwing, nonThrowing] {
            let w = words(box).pointee
            guard w.function != nil, w.context != nil, w.function != w.context else { return false }
        }
        guard sf_tramp_int_throwing2(nil, nil, 5, 7, words(throwing)) == 5 &* 31 &+ 7 &+ k else { return false }
        guard let code = sf_tramp_alloc_kind(3, UnsafeMutableRawPointer(words(nonThrowing)), nonThrowingIntThunk(arity: 2))
        else { return true }
        defer { sf_tramp_free(code) }
        let entry = CFunction.at(code, as: (@convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, Int, Int) -> Int).self)
        return withExtendedLifetime(nonThrowing) { entry(nil, nil, 5, 7) == 5 &* 17 &- 7 &+ k }
    }

    /// The box's first stored property, read as the thunks read it.
    private static func words(_ box: IntMethodBody2) -> UnsafeMutablePointer<sf_swift_closure> { ClosureWords.of(box) }
}
