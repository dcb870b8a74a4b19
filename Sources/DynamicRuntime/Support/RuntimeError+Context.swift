extension RuntimeError {
    /// The structured details of a ``RuntimeError``: which class, method or ivar, what was
    /// expected and what was given. Fields that do not apply are nil.
    public struct Context: Sendable, Equatable, CustomStringConvertible {
        /// The class as the caller sees it (a hidden per-object class is never named).
        public var className: String?
        /// The selector of the method concerned.
        public var selector: String?
        /// Whether `selector` names a class method (`+[C sel]`).
        public var isClassMethod: Bool
        /// The instance variable concerned.
        public var ivar: String?
        /// The argument concerned, counted from 1 after the receiver and selector.
        public var argument: Int?
        /// What the runtime was doing, or who used a mismatched signature ("a hook",
        /// "add an ivar", "the sender").
        public var operation: String?
        /// What was expected: a type, an encoding, a kind of value.
        public var expected: String?
        /// What was given instead.
        public var actual: String?
        /// Whether `expected` and `actual` describe the return value (`signatureMismatch`).
        public var isReturnValue: Bool
        /// The class an object or class was to become (`incompatibleClass`).
        public var target: String?
        /// The index of the offending character in a malformed encoding.
        public var offset: Int?
        /// Why, where `expected` and `actual` do not say it all.
        public var reason: String?
        /// The error a method body, hook or handler threw, with its own type.
        public var underlying: (any Error)?

        /// Details of an error; leave out what does not apply.
        public init(className: String? = nil, selector: String? = nil, isClassMethod: Bool = false,
                    ivar: String? = nil, argument: Int? = nil, operation: String? = nil,
                    expected: String? = nil, actual: String? = nil, isReturnValue: Bool = false, target: String? = nil,
                    offset: Int? = nil, reason: String? = nil, underlying: (any Error)? = nil) {
            self.className = className
            self.selector = selector
            self.isClassMethod = isClassMethod
            self.ivar = ivar
            self.argument = argument
            self.operation = operation
            self.expected = expected
            self.actual = actual
            self.isReturnValue = isReturnValue
            self.target = target
            self.offset = offset
            self.reason = reason
            self.underlying = underlying
        }

        /// Equal when every field is; underlying errors compare by type and description.
        public static func == (a: Context, b: Context) -> Bool {
            a.className == b.className && a.selector == b.selector && a.isClassMethod == b.isClassMethod
                && a.ivar == b.ivar && a.argument == b.argument && a.operation == b.operation
                && a.expected == b.expected && a.actual == b.actual && a.isReturnValue == b.isReturnValue
                && a.target == b.target
                && a.offset == b.offset && a.reason == b.reason
                && a.underlying.map(Self.identity) == b.underlying.map(Self.identity)
        }

        private static func identity(_ e: any Error) -> String { "\(type(of: e)): \(String(describing: e))" }

        /// The method, ivar or class concerned: `-[Counter add:]`, `ivar 'count' of Counter`,
        /// `class 'Counter'`; nil when the error concerns none (a NULL handle from C).
        public var subject: String? {
            switch (className, selector, ivar) {
            case let (c?, s?, _): "\(isClassMethod ? "+" : "-")[\(c) \(s)]"
            case let (c?, nil, i?): "ivar '\(i)' of '\(c)'"
            case let (c?, nil, nil): "class '\(c)'"
            case let (nil, s?, _): "selector '\(s)'"
            case let (nil, nil, i?): "ivar '\(i)'"
            case (nil, nil, nil): nil
            }
        }

        /// The longest input a description quotes whole, in bytes; a longer one is quoted as
        /// its first `shownPrefix` characters and its length, so that a 64 kB encoding or name
        /// does not make a 64 kB message. The fields keep the whole values.
        static let quotedWhole = 160
        static let shownPrefix = 64

        /// `s` as a description quotes it.
        static func shown(_ s: String) -> String {
            let bytes = s.utf8.count
            guard bytes > quotedWhole else { return s }
            return "\(s.prefix(shownPrefix))… (\(bytes) bytes)"
        }

        /// This context with every text field shortened as descriptions quote it.
        var shownForm: Context {
            var c = self
            c.className = className.map(Self.shown)
            c.selector = selector.map(Self.shown)
            c.ivar = ivar.map(Self.shown)
            c.operation = operation.map(Self.shown)
            c.expected = expected.map(Self.shown)
            c.actual = actual.map(Self.shown)
            c.target = target.map(Self.shown)
            c.reason = reason.map(Self.shown)
            return c
        }

        /// `expected …, got …` with the argument or ivar it is about, or the reason alone.
        public var description: String {
            let (operation, expected, actual, reason) = (operation.map(Self.shown), expected.map(Self.shown),
                                                         actual.map(Self.shown), reason.map(Self.shown))
            var parts: [String] = []
            if let operation { parts.append(operation) }
            if let argument { parts.append("argument \(argument)") }
            var comparison: [String] = []
            if let expected { comparison.append("expected \(expected)") }
            if let actual { comparison.append("got \(actual)") }
            if !comparison.isEmpty { parts.append(comparison.joined(separator: ", ")) }
            var text = parts.joined(separator: ": ")
            if let reason { text = text.isEmpty ? reason : "\(text) (\(reason))" }
            if let underlying { text += text.isEmpty ? String(describing: underlying) : ": \(underlying)" }
            return text
        }
    }
}
