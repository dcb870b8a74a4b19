import CDynamicRuntime

/// The process-wide forward handler (objc4's `objc_setForwardHandler`): the last stage of the
/// miss sequence, asked once when `forwardInvocation:` is not defined, before
/// `doesNotRecognizeSelector:` and the error. Read only on that path, never by a send that
/// finds its method.
enum ForwardHandler {
    /// What answers a message nothing else handled: true when it answered (the record's
    /// return value is the send's result), false to decline.
    typealias Body = @Sendable (Invocation) throws -> Bool

    final class Box: Sendable {
        let body: Body
        init(_ body: @escaping Body) { self.body = body }
    }

    // A lock, not an atomic pointer: the reader must retain the box before another thread's
    // swap releases it, and this path is taken only by sends that are about to fail. A leaf,
    // so the fork handlers take it.
    static let installed: Locked<Box?> = {
        let lock = Locked<Box?>(nil)
        ForkSafety.register(lock)
        return lock
    }()

    /// Installs `body` for every class (nil: the default, which declines).
    static func set(_ body: Body?) {
        let new = body.map(Box.init)
        let old = installed.withLock { state -> Box? in
            defer { state = new }
            return state
        }
        // Released outside the lock: a closure's captures may run arbitrary deinit code.
        withExtendedLifetime(old) {}
    }

    /// The handler installed now, retained for the caller.
    static var current: Body? { installed.withLock { $0 }?.body }
}

extension Forwarding {
    /// The forward handler's stage, for a frame whose class defines no `forwardInvocation:`:
    /// returns the outcome when the handler answered, nil when none is installed, it declined,
    /// or the frame's types are not known (a C send without `methodSignatureForSelector:`).
    static func forwardHandlerStage<Frame: ForwardingFrame>(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                                            frame: Frame) throws(RuntimeError) -> Frame.Outcome? {
        guard let body = ForwardHandler.current else { return nil }
        guard let sig = try frame.forwardHandlerSignature(declared: try methodSignature(raw, selector, cls), selector, cls: cls) else {
            return nil
        }
        var invocation = try frame.capture(sig, receiver: raw, selector, cls: cls)
        let answered: Bool
        do {
            answered = try body(invocation)
        } catch let error as RuntimeError {
            throw error
        } catch {
            throw .implementationFailed(.init(className: visibleName(cls), selector: selector.name, underlying: error))
        }
        guard answered else { return nil }
        let outcome = frame.finish(invocation, sig)
        Invocation.recycle(&invocation)
        return outcome
    }
}
