import CShims

/// Carries an error from inside an IMP (a throwing closure or hook) to the sender on the
/// same thread, across the C frames in between.
final class PendingError {
    let error: RuntimeError
    init(_ error: RuntimeError) { self.error = error }
}

extension Runtime {
    /// Records `error` for the nearest runtime send on this thread; the first one wins.
    static func raise(_ error: RuntimeError) {
        guard sf_get_pending_error() == nil else { return }
        sf_set_pending_error(Unmanaged.passRetained(PendingError(error)).toOpaque())
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
        if let p = sf_take_pending_error() { Unmanaged<PendingError>.fromOpaque(p).release() }
    }

    /// Throws the error an IMP raised during the last call, if any.
    @usableFromInline
    static func rethrowPending() throws(RuntimeError) {
        if let p = sf_take_pending_error() {
            throw Unmanaged<PendingError>.fromOpaque(p).takeRetainedValue().error
        }
    }

    /// The error a closure threw, as a runtime error naming the method.
    static func wrap(_ error: any Error, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> RuntimeError {
        if let e = error as? RuntimeError { return e }
        let raw = args[0]!.load(as: sf_id?.self)
        let sel = Selector(raw: args[1]!.load(as: sf_sel.self))
        let name = raw.flatMap { sf_object_getClass($0) }.map { String(cString: sf_class_getName($0)) } ?? "nil"
        return .implementationFailed(className: name, selector: sel.name, reason: String(describing: error))
    }
}
