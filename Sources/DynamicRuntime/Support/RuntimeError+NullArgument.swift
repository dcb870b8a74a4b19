// Shorthand for the most common error: a NULL handle from C.
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
}
