import CDynamicRuntime

// Typed sends for arities 0 to 4. When the method's signature key matches the call's and every
// argument travels in an integer register, the IMP is called directly; otherwise the general
// path checks each type and uses libffi. Written by scripts/generate-arity-ladders.py.

extension MessageReceiver {
    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send<R: MessageReturn>(_ selector: Selector, as _: R.Type = R.self) throws(RuntimeError) -> R {
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode,
            words: true ? (0, 0, 0, 0) : nil, count: 0, exact: true,
            args: (), values: { _ in [] }, store: { _, _, _ in })
    }

    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send(_ selector: Selector, as _: Void.Type) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode,
            words: true ? (0, 0, 0, 0) : nil, count: 0, exact: true,
            args: (), values: { _ in [] }, store: { _, _, _ in })
    }

    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, R: MessageReturn>(_ selector: Selector, _ a: A, as _: R.Type = R.self) throws(RuntimeError) -> R {
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode | A.keyCode << 5,
            words: A.passesInWord ? (a.argumentWord, 0, 0, 0) : nil, count: 1, exact: A.keyIsExact,
            args: a, values: { [$0] }, store: { a, _, p in a.storeArgument(to: p) })
    }

    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument>(_ selector: Selector, _ a: A, as _: Void.Type) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode | A.keyCode << 5,
            words: A.passesInWord ? (a.argumentWord, 0, 0, 0) : nil, count: 1, exact: A.keyIsExact,
            args: a, values: { [$0] }, store: { a, _, p in a.storeArgument(to: p) })
    }

    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument, R: MessageReturn>(_ selector: Selector, _ a: A, _ b: B, as _: R.Type = R.self) throws(RuntimeError) -> R {
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode | A.keyCode << 5 | B.keyCode << 10,
            words: A.passesInWord && B.passesInWord ? (a.argumentWord, b.argumentWord, 0, 0) : nil, count: 2, exact: A.keyIsExact && B.keyIsExact,
            args: (a, b), values: { [$0.0, $0.1] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) default: x.1.storeArgument(to: p) }
            })
    }

    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument>(_ selector: Selector, _ a: A, _ b: B, as _: Void.Type) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode | A.keyCode << 5 | B.keyCode << 10,
            words: A.passesInWord && B.passesInWord ? (a.argumentWord, b.argumentWord, 0, 0) : nil, count: 2, exact: A.keyIsExact && B.keyIsExact,
            args: (a, b), values: { [$0.0, $0.1] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) default: x.1.storeArgument(to: p) }
            })
    }

    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument, C: MessageArgument, R: MessageReturn>(_ selector: Selector, _ a: A, _ b: B, _ c: C, as _: R.Type = R.self) throws(RuntimeError) -> R {
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode | A.keyCode << 5 | B.keyCode << 10 | C.keyCode << 15,
            words: A.passesInWord && B.passesInWord && C.passesInWord ? (a.argumentWord, b.argumentWord, c.argumentWord, 0) : nil, count: 3, exact: A.keyIsExact && B.keyIsExact && C.keyIsExact,
            args: (a, b, c), values: { [$0.0, $0.1, $0.2] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) case 1: x.1.storeArgument(to: p) default: x.2.storeArgument(to: p) }
            })
    }

    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument, C: MessageArgument>(_ selector: Selector, _ a: A, _ b: B, _ c: C, as _: Void.Type) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode | A.keyCode << 5 | B.keyCode << 10 | C.keyCode << 15,
            words: A.passesInWord && B.passesInWord && C.passesInWord ? (a.argumentWord, b.argumentWord, c.argumentWord, 0) : nil, count: 3, exact: A.keyIsExact && B.keyIsExact && C.keyIsExact,
            args: (a, b, c), values: { [$0.0, $0.1, $0.2] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) case 1: x.1.storeArgument(to: p) default: x.2.storeArgument(to: p) }
            })
    }

    /// A typed send: `let sum: Int = try obj.send("add:to:", 1, 2)`. The call's types must
    /// match the method's signature, or it throws `signatureMismatch`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument, R: MessageReturn>(_ selector: Selector, _ a: A, _ b: B, _ c: C, _ d: D, as _: R.Type = R.self) throws(RuntimeError) -> R {
        try MessageSend.typed(
            self, selector, key: R.returnKeyCode | A.keyCode << 5 | B.keyCode << 10 | C.keyCode << 15 | D.keyCode << 20,
            words: A.passesInWord && B.passesInWord && C.passesInWord && D.passesInWord ? (a.argumentWord, b.argumentWord, c.argumentWord, d.argumentWord) : nil, count: 4, exact: A.keyIsExact && B.keyIsExact && C.keyIsExact && D.keyIsExact,
            args: (a, b, c, d), values: { [$0.0, $0.1, $0.2, $0.3] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) case 1: x.1.storeArgument(to: p) case 2: x.2.storeArgument(to: p) default: x.3.storeArgument(to: p) }
            })
    }

    /// A typed send to a void method: `try obj.send("reset", as: Void.self)`.
    @inlinable @inline(__always)
    public func send<A: MessageArgument, B: MessageArgument, C: MessageArgument, D: MessageArgument>(_ selector: Selector, _ a: A, _ b: B, _ c: C, _ d: D, as _: Void.Type) throws(RuntimeError) {
        let _: NoReturn = try MessageSend.typed(
            self, selector, key: NoReturn.returnKeyCode | A.keyCode << 5 | B.keyCode << 10 | C.keyCode << 15 | D.keyCode << 20,
            words: A.passesInWord && B.passesInWord && C.passesInWord && D.passesInWord ? (a.argumentWord, b.argumentWord, c.argumentWord, d.argumentWord) : nil, count: 4, exact: A.keyIsExact && B.keyIsExact && C.keyIsExact && D.keyIsExact,
            args: (a, b, c, d), values: { [$0.0, $0.1, $0.2, $0.3] }, store: { x, i, p in
                switch i { case 0: x.0.storeArgument(to: p) case 1: x.1.storeArgument(to: p) case 2: x.2.storeArgument(to: p) default: x.3.storeArgument(to: p) }
            })
    }
}
