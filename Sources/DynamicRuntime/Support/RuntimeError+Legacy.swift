// The payload labels RuntimeError had before it carried a Context, for code written against
// them: each maps a "-" placeholder to an absent field. Not public; new code builds
// a Context.
extension RuntimeError {
    /// `invalidArgument` for a NULL where `what` ("a class", "a selector") was expected.
    package static func nullArgument(_ what: String, className: String? = nil, selector: String? = nil) -> RuntimeError {
        .invalidArgument(Context(className: className, selector: selector, expected: withArticle(what), actual: "NULL"))
    }

    /// "class" as "a class", "object" as "an object"; a phrase with its own article as it is.
    private static func withArticle(_ noun: String) -> String {
        if ["a ", "an ", "the "].contains(where: noun.hasPrefix) { return noun }
        return ("aeiou".contains(noun.first ?? "x") ? "an " : "a ") + noun
    }

    private static func name(_ s: String) -> String? { s == "-" || s.isEmpty ? nil : s }

    @available(*, deprecated, message: "use .doesNotRecognizeSelector(Context)")
    package static func doesNotRecognizeSelector(className: String, selector: String, isClassMethod: Bool) -> RuntimeError {
        .doesNotRecognizeSelector(Context(className: name(className), selector: name(selector), isClassMethod: isClassMethod))
    }
    @available(*, deprecated, message: "use .invalidArgument(Context) with expected and actual")
    package static func invalidArgument(className: String, selector: String, reason: String) -> RuntimeError {
        .invalidArgument(Context(className: name(className), selector: name(selector), reason: reason))
    }
    @available(*, deprecated, message: "use .signatureMismatch(Context)")
    package static func signatureMismatch(className: String, selector: String, expected: String, actual: String) -> RuntimeError {
        .signatureMismatch(Context(className: name(className), selector: name(selector), expected: expected, actual: actual))
    }
    @available(*, deprecated, message: "use .hookFailed(Context)")
    package static func hookFailed(className: String, selector: String, reason: String) -> RuntimeError {
        .hookFailed(Context(className: name(className), selector: name(selector), reason: reason))
    }
    @available(*, deprecated, message: "use .forwardingFailed(Context)")
    package static func forwardingFailed(className: String, selector: String, reason: String) -> RuntimeError {
        .forwardingFailed(Context(className: name(className), selector: name(selector), reason: reason))
    }
    @available(*, deprecated, message: "use .implementationFailed(Context)")
    package static func implementationFailed(className: String, selector: String, reason: String) -> RuntimeError {
        .implementationFailed(Context(className: name(className), selector: name(selector), reason: reason))
    }
    @available(*, deprecated, message: "use .reservedSelector(Context)")
    package static func reservedSelector(className: String, selector: String, reason: String) -> RuntimeError {
        .reservedSelector(Context(className: name(className), selector: name(selector), reason: reason))
    }
    @available(*, deprecated, message: "use .incompatibleClass(Context)")
    package static func incompatibleClass(className: String, target: String, reason: String) -> RuntimeError {
        .incompatibleClass(Context(className: name(className), target: target, reason: reason))
    }
    @available(*, deprecated, message: "use .classInUse(Context)")
    package static func classInUse(name n: String, reason: String) -> RuntimeError {
        .classInUse(Context(className: n, reason: reason))
    }
}
