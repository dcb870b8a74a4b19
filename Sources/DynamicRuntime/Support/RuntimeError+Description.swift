extension RuntimeError {
    /// A readable form naming the visible class, the selector or ivar, expected and actual,
    /// for logs, test failures and `sf_last_error_message()`.
    public var description: String {
        // Long inputs are quoted as a prefix and a length (`Context.shown`).
        let c = context.shownForm
        let subject = c.subject
        let detail = c.description
        func joined(_ head: String) -> String { detail.isEmpty ? head : "\(head): \(detail)" }
        switch self {
        case .doesNotRecognizeSelector:
            let receiver = c.isClassMethod ? "class" : "instance"
            return "\(subject ?? "selector"): unrecognized selector sent to \(receiver)"
        case .duplicateClass:
            return joined("a class named '\(c.className ?? "")' is already registered")
        case .malformedEncoding:
            var head = "malformed type encoding \"\(c.actual ?? "")\""
            if let offset = c.offset { head += " at offset \(offset)" }
            if let s = subject { head = "\(s): " + head }
            var tail = c.reason ?? ""
            if let e = c.expected { tail = tail.isEmpty ? "expected \(e)" : "\(tail) (expected \(e))" }
            return tail.isEmpty ? head : "\(head): \(tail)"
        case .signatureMismatch:
            let what = c.argument.map { "argument \($0) of type" } ?? (c.isReturnValue ? "a return value of type" : "signature")
            var text = "\(subject ?? "the method") has \(what) \(Self.quoted(c.expected)), but \(c.operation ?? "the sender") uses \(Self.quoted(c.actual))"
            if let r = c.reason { text += ": \(r)" }
            return text
        case .invalidArgument:
            return subject.map { joined($0) } ?? joined("invalid argument")
        case .classInUse:
            return joined("\(subject ?? "the class") is still in use")
        case .methodExists:
            return joined("\(subject ?? "the method") already exists; use replaceMethod to change it")
        case .classAlreadyRegistered:
            return "cannot \(c.operation ?? "do that"): class '\(c.className ?? "")' is already registered"
        case .classNotRegistered:
            return "cannot \(c.operation ?? "do that"): class '\(c.className ?? "")' is not registered yet"
        case .noSuchMethod:
            return "class '\(c.className ?? "")' has no method '\(c.selector ?? "")' of its own"
        case .reservedSelector:
            return joined("\(subject ?? "the selector") is reserved")
        case .hookFailed:
            return joined("cannot hook \(subject ?? "the method")")
        case .forwardingFailed:
            return joined("forwarding \(subject ?? "the message") failed")
        case .implementationFailed:
            return joined("\(subject ?? "the method") failed")
        case .duplicateProtocol:
            return "a protocol named '\(c.className ?? "")' is already registered"
        case .incompatibleClass:
            return joined("an instance of '\(c.className ?? "")' cannot become '\(c.target ?? "")'")
        }
    }

    /// An encoding in quotes; a phrase ("8 bytes ('q')") as it is.
    private static func quoted(_ s: String?) -> String {
        guard let s else { return "?" }
        return s.contains(" ") ? s : "\"\(s)\""
    }
}
