import CDynamicRuntime

/// A caller's frame as the miss sequence (`Forwarding.handleMiss`) needs it. The stages are
/// the same for every caller; what differs is how a frame is sent on, which signature its
/// invocation gets and where the return value goes. `SwiftFrame` and `CFrame` adapt the two
/// kinds of frame the runtime sees.
protocol ForwardingFrame {
    /// What the caller learns from a handled miss.
    associatedtype Outcome

    /// Stage 1 added the method: run it on this frame.
    func call(_ method: sf_method_t, on receiver: sf_id, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Outcome

    /// Stage 2 named another receiver: send it this frame (with its own forwarding on a miss).
    func send(to target: sf_id, _ selector: Selector) throws(RuntimeError) -> Outcome

    /// Stage 3: the signature the invocation gets, given the one the class declares (if any);
    /// refuses one this frame cannot carry.
    func invocationSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature

    /// The forward handler's stage: the signature its invocation gets, or nil when this frame's
    /// types are unknown (the handler is then not asked).
    func forwardHandlerSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature?

    /// Stage 3: an invocation holding this frame's arguments.
    func capture(_ signature: Signature, receiver: sf_id, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Invocation

    /// Stage 3: hands the invocation's return value to the caller.
    func finish(_ invocation: Invocation, _ signature: Signature) -> Outcome
}
