import Foundation
import DynamicRuntime

/// A message captured for a run loop: an invocation record with its target and argument
/// retained (DESIGN.md: perform request or selector timer). Dropping it releases them.
struct CapturedMessage: @unchecked Sendable {
    // An Invocation is a handle to one record; deliveries of one message never overlap
    // (a timer serializes its fires, a request runs once).
    let invocation: Invocation
    let className: String
    let selector: Selector
    /// Whether the method takes the argument (the timer, the object); false: sent bare.
    let takesArgument: Bool

    /// Captures `selector` for `target` with `argument` (sent only if the method takes one).
    /// The method must take no argument or one object; a selector the target does not answer
    /// now is captured by its name's colons and goes through forwarding when delivered.
    /// `sendTo` (a weak proxy) receives the message instead of `target`, whose class is checked.
    init(target: ObjectRef, selector: Selector, argument: ObjectRef, sendTo: ObjectRef? = nil) throws(RunLoopError) {
        guard let cls = target.runtimeClass else { throw .nilTarget(selector: selector.name) }
        let signature: Signature
        if let method = cls.method(for: selector) {
            signature = method.signature
        } else {
            let encoding = selector.colonCount == 0 ? "v@:" : "v@:@"
            signature = try! Signature(encoding) // constant, well formed
        }
        let arguments = signature.argumentTypes.dropFirst(2)
        guard arguments.count <= 1, arguments.allSatisfy({ $0 == .object }), selector.colonCount <= 1 else {
            throw .unsupportedSignature(className: cls.name, selector: selector.name, signature: signature.encoding,
                                        expected: "with no argument or one object argument")
        }
        self.className = cls.name
        self.selector = selector
        takesArgument = arguments.count == 1
        invocation = Invocation(signature: signature, target: sendTo ?? target, selector: selector)
        if takesArgument { try! invocation.setArgument(argument, at: 0) } // checked above: one object
        invocation.retainArguments()
    }

    /// The argument it carries (nil if the method takes none).
    var argument: ObjectRef { takesArgument ? ((try? invocation.argument(at: 0, as: ObjectRef.self)) ?? .nil) : .nil }

    /// Sends the message on this thread; a failure goes to the delivery error handler.
    /// Returns false if it failed.
    @discardableResult
    func deliver(source: String) -> Bool {
        let previous = CurrentMessage.enter(className: className, selector: selector)
        defer { CurrentMessage.leave(previous) }
        do {
            try invocation.invoke()
            return true
        } catch {
            MessageDelivery.report(DeliveryFailure(source: source, className: className, selector: selector, error: error))
            return false
        }
    }
}

/// Where failures of messages delivered on run loops go.
public enum MessageDelivery {
    private static let handler = Locked<@Sendable (DeliveryFailure) -> Void>(MessageDelivery.logToStandardError)

    /// Receives every failed delivery (a selector no longer answered, a method that threw),
    /// on the thread of the run loop that delivered it. The default writes one line to
    /// standard error. A failing repeating timer is invalidated after the call.
    public static var errorHandler: @Sendable (DeliveryFailure) -> Void {
        get { handler.withLock { $0 } }
        set { handler.withLock { $0 = newValue } }
    }

    /// The default handler: one line on standard error.
    public static let logToStandardError: @Sendable (DeliveryFailure) -> Void = { failure in
        FileHandle.standardError.write(Data((failure.description + "\n").utf8))
    }

    static func report(_ failure: DeliveryFailure) { errorHandler(failure) }
}
