import CDynamicRuntime

/// Carries an error from inside an IMP (a throwing closure or hook) to the sender on the
/// same thread, across the C frames in between.
final class PendingError {
    let error: RuntimeError
    init(_ error: RuntimeError) { self.error = error }

    /// The error in a box made with `ObjectWord(retaining:)` (the box is released).
    @inline(never)
    static func unbox(_ box: UnsafeMutableRawPointer) -> RuntimeError {
        ObjectWord<PendingError>(box).take().error
    }
}

extension Runtime {
    /// Records `error` for the nearest runtime send on this thread; the first one wins.
    static func raise(_ error: RuntimeError) {
        guard sf_get_pending_error() == nil else { return }
        sf_set_pending_error(ObjectWord(retaining: PendingError(error)).pointer)
    }

    /// Drops an error that no send collected: one raised by a closure IMP that C called
    /// directly (through `sf_msg_lookup`). Every send starts with this, so a stale error can
    /// never be reported by a later, unrelated send. (C sees it through `sf_last_error()`.)
    @inlinable @inline(__always)
    static func discardStalePending() {
        if _slowPath(sf_get_pending_error() != nil) { dropPending() }
    }

    @usableFromInline
    static func dropPending() {
        if let p = sf_take_pending_error() { ObjectWord<PendingError>(p).release() }
    }

    /// Throws the error an IMP raised during the last call, if any.
    @usableFromInline
    static func rethrowPending() throws(RuntimeError) {
        if let p = sf_take_pending_error() {
            throw ObjectWord<PendingError>(p).take().error
        }
    }

    /// The receiver's visible class, read before a method body runs: the body may free the
    /// receiver before it throws, so the error must not read it afterwards.
    @inline(__always)
    static func receiverClass(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> sf_class_t? {
        guard let raw = args[0]!.load(as: sf_id?.self) else { return nil }
        return sf_class_visible(sf_object_isa(raw))
    }

    /// The error a closure threw, as a runtime error naming the method (`cls` from
    /// `receiverClass`, taken before the call).
    static func wrap(_ error: any Error, receiverClass cls: sf_class_t?,
                     _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> RuntimeError {
        wrap(error, className: cls.map { String(cString: sf_class_getName($0)) }, args)
    }

    /// The error a closure threw, as a runtime error naming the method of class `className`.
    static func wrap(_ error: any Error, className: String?,
                     _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> RuntimeError {
        if let e = error as? RuntimeError { return e }
        let sel = Selector(raw: args[1]!.load(as: sf_sel.self))
        return .implementationFailed(.init(className: className, selector: sel.name, underlying: error))
    }
}
