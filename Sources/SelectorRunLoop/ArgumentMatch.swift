import DynamicRuntime

/// How a cancel by selector matches a request's argument, as
/// `cancelPreviousPerformRequestsWithTarget:selector:object:`: the same object always matches;
/// otherwise, when the given argument's class implements `isEqual:`, that message is sent to
/// it with the request's argument; else identity alone. nil matches only requests without one.
struct ArgumentMatch {
    private let argument: Object?
    private let isEqualReturn: TypeEncoding?

    init(_ argument: Object?) {
        self.argument = argument
        // Decided once per cancel. Objective-C's BOOL is a signed char on x86-64, so `c` and
        // `C` are taken beside `B`; any other fails at the send, with the runtime's typed error.
        isEqualReturn = argument.flatMap { a in
            a.responds(to: "isEqual:") ? (a.runtimeClass?.method(for: "isEqual:")?.signature.returnType ?? .bool) : nil
        }
    }

    /// Whether `request` was made with this argument. Sends `isEqual:`, so never call it with
    /// a lock held.
    func matches(_ request: PerformRequest) -> Bool {
        guard let argument else { return request.argumentKey == nil }
        guard let key = request.argumentKey else { return false }
        if key == UnsafeMutableRawPointer(argument.raw) { return true }
        // Retained for the send: the request may run, and release it, meanwhile.
        guard let isEqualReturn, let other = request.pendingArgument() else { return false }
        do throws(RuntimeError) {
            switch isEqualReturn {
            case .int8: return try argument.send("isEqual:", other.ref, as: Int8.self) != 0
            case .uint8: return try argument.send("isEqual:", other.ref, as: UInt8.self) != 0
            default: return try argument.send("isEqual:", other.ref, as: Bool.self)
            }
        } catch {
            // A cancel cannot throw (Cocoa's does not): the failure goes where failed
            // deliveries go, and only identity matches.
            MessageDelivery.report(DeliveryFailure(source: "cancel", className: argument.runtimeClass?.name ?? "?",
                                                   selector: "isEqual:", error: error))
            return false
        }
    }
}
