import DynamicRuntime

/// The demo's runtime, lifecycle (+initialize and dealloc), forwarding and hooks sections. Each prints its sends and returns a
/// one-line summary built from what the sends returned.
enum DemoSections {
    static func heading(_ title: String) {
        print("\n== \(title) " + String(repeating: "=", count: max(0, 60 - title.count)))
    }

    static func runtime() throws -> String {
        heading("classes and message sends")
        let calc = try RuntimeClass(name: "Calculator", ivars: [("total", .int64)])
        print("registered \(calc.name): instance size \(calc.instanceSize) bytes, metaclass \(calc.metaclass)")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        try calc.addMethod("accumulate:") { (self_: ObjectRef, n: Int) -> Int in
            let total = try self_.value(ofIvar: "total", as: Int.self) + n
            try self_.setValue(total, forIvar: "total")
            return total
        }
        try calc.metaclass.addMethod("describe") { (_: ObjectRef) in CString(DemoSections.staticDescription) }
        let c = try calc.createInstance()
        let sum: Int = try c.send("add:to:", 1, 2)
        print("[c add:1 to:2]            -> \(sum)          (typed send, direct call)")
        let dynamic = try c.send("add:to:", 1, 2)
        print("[c add:1 to:2]            -> \(dynamic)          (dynamic send, ffi_call)")
        _ = try c.send("accumulate:", 5, as: Int.self)
        let total = try c.send("accumulate:", 5, as: Int.self)
        print("[c accumulate:5] twice    -> \(total)         (ivar 'total')")
        print("[Calculator describe]     -> \((try calc.send("describe", as: CString.self)).string ?? "")")
        var thrown = 0
        do {
            try c.send("divide:by:", 1, 0)
        } catch {
            thrown += 1
            print("[c divide:1 by:0]         -> error: \(error)")
        }
        do {
            let _: Int = try c.send("add:to:", 1.5, 2)
        } catch {
            thrown += 1
            print("[c add:1.5 to:2]          -> error: \(error)")
        }
        return "a class built at run time answered the typed send (\(sum)) and the dynamic one "
            + "(\(dynamic)) alike, kept state in an ivar (total \(total)), answered a class method, "
            + "and \(thrown) of 2 bad sends (unknown selector, Double for long) threw typed errors."
    }

    static func lifecycle() throws -> String {
        heading("+initialize and an overridden dealloc")
        let initialized = Locked<[String]>([])
        let shape = try RuntimeClass(name: "Shape")
        try shape.metaclass.addMethod("initialize") { (me: ObjectRef) in
            let name = me.runtimeClass?.instanceClass.name ?? "?"
            initialized.withLock { $0.append(name) }
            print("  +[Shape initialize] self = \(name)" + (name == shape.name ? "" : "   (\(name) has none of its own)"))
        }
        try shape.metaclass.addMethod("sides") { (_: ObjectRef) in 0 }
        let circle = try RuntimeClass(name: "Circle", superclass: shape)
        print("[Circle sides]            -> \(try circle.send("sides", as: Int.self))          (the first message: superclass first)")
        print("[Circle sides] again      -> \(try circle.send("sides", as: Int.self))          (once per class)")
        print("[Shape sides]             -> \(try shape.send("sides", as: Int.self))          (initialized already)")

        let buffer = try RuntimeClass(name: "Buffer", ivars: [("storage", .object)])
        try buffer.addMethod("dealloc") { (me: ObjectRef) in
            print("  -[Buffer dealloc] releases its storage")
            try me.setValue(ObjectRef(nil), forIvar: "storage")
            print("  -[Buffer dealloc] calls [super dealloc]")
            try me.asSuper(of: buffer).send("dealloc", as: Void.self)
        }
        let storageFreed = Locked(false)
        var b: Object? = try buffer.createInstance()
        do {
            let storage = try RuntimeClass(name: "Storage").createInstance()
            storage.onDeallocate { _ in
                storageFreed.withLock { $0 = true }
                print("  storage freed")
            }
            try b!.setValue(storage.ref, forIvar: "storage")
        }
        let weak = try WeakReference(b!)
        print("[buffer release]          (its last reference)")
        b = nil
        let gone = weak.object == nil
        print("weak ref to buffer       -> \(gone ? "nil" : "the object")")
        let order = initialized.withLock { $0 }
        let freed = storageFreed.withLock { $0 }
        return "+initialize ran once per class, superclass first (\(order.joined(separator: ", "))): Circle has none "
            + "of its own, so Shape's ran again with Circle as self; Buffer's dealloc released its storage "
            + "(\(freed ? "freed" : "NOT freed")) and called [super dealloc]; a weak reference to the buffer then "
            + "read \(gone ? "nil" : "the object")."
    }

    static func forwarding() throws -> String {
        heading("forwarding: resolve, forwarding target, forwardInvocation")
        let greeter = try RuntimeClass(name: "Greeter")
        try greeter.addMethod("greet:") { (_: ObjectRef, n: Int) in n * 10 }
        let g = try greeter.createInstance()

        let lazy = try RuntimeClass(name: "Lazy")
        try lazy.setResolveInstanceMethod { cls, sel in
            print("  resolveInstanceMethod: \(sel) -> adding it")
            try cls.addMethod(sel) { (_: ObjectRef) in 7 }
            return true
        }
        let l = try lazy.createInstance()
        let resolved = try l.send("seven", as: Int.self)
        print("[lazy seven]              -> \(resolved)")
        print("[lazy seven] again        -> \(try l.send("seven", as: Int.self))   (now a real method)")

        let relay = try RuntimeClass(name: "Relay", ivars: [("next", .object)])
        try relay.setForwardingTarget { recv, sel in
            print("  forwardingTargetForSelector: \(sel) -> the greeter")
            return try recv.value(ofIvar: "next", as: ObjectRef.self)
        }
        let r = try relay.createInstance()
        try r.setValue(g.ref, forIvar: "next")
        let relayed = try r.send("greet:", 4, as: Int.self)
        print("[relay greet:4]           -> \(relayed)")

        let logging = try Proxy.makeClass(name: "LoggingProxy") { invocation, proceed in
            print("  forwardInvocation: \(invocation)")
            try proceed()
            print("  ... returned \(invocation.returnValue)")
        }
        let proxy = try Proxy.create(logging, wrapping: g)
        let proxied = try proxy.send("greet:", 5, as: Int.self)
        print("[proxy greet:5]           -> \(proxied)")
        var refused = "no error"
        do {
            try proxy.send("wave")
        } catch {
            refused = "an error"
            print("[proxy wave]              -> error: \(error)")
        }
        return "each forwarding stage answered a message its class lacks: resolveInstanceMethod "
            + "added 'seven' (\(resolved)), forwardingTarget relayed greet:4 (\(relayed)), a proxy's "
            + "forwardInvocation logged and replayed greet:5 (\(proxied)); a selector nobody "
            + "implements gave \(refused)."
    }

    static func hooks() throws -> String {
        heading("hooks: before / after blocks by name, per instance, unhook")
        let account = try RuntimeClass(name: "Account", ivars: [("balance", .int64)])
        try account.addMethod("deposit:") { (self_: ObjectRef, amount: Int) -> Int in
            let b = try self_.value(ofIvar: "balance", as: Int.self) + amount
            try self_.setValue(b, forIvar: "balance")
            return b
        }
        let original = account.ownMethod(for: "deposit:")!.implementation
        let a = try account.createInstance()
        let b = try account.createInstance()
        let before = try account.hook("deposit:", .before) { ctx in
            print("  before deposit:\(try ctx.argument(at: 0, as: Int.self))")
        }
        let after = try account.hook("deposit:", .after) { ctx in
            print("  after  deposit: balance now \(try ctx.returnValue(as: Int.self))")
        }
        let first = try a.send("deposit:", 100, as: Int.self)
        print("[a deposit:100]           -> \(first)")
        let cap = try a.hook("deposit:", .instead) { ctx in
            let amount = try ctx.argument(at: 0, as: Int.self)
            if amount > 500 {
                print("  instead: refusing \(amount) on this account only")
                try ctx.setReturnValue(-1)
            } else {
                try ctx.proceed()
            }
        }
        let refused = try a.send("deposit:", 1000, as: Int.self)
        print("[a deposit:1000]          -> \(refused)")
        let other = try b.send("deposit:", 1000, as: Int.self)
        print("[b deposit:1000]          -> \(other)   (other instance untouched)")
        cap.remove()
        before.remove()
        after.remove()
        let restored = account.ownMethod(for: "deposit:")!.implementation
        print("unhooked: IMP \(restored == original ? "==" : "!=") original (\(restored))")
        let last = try a.send("deposit:", 1, as: Int.self)
        print("[a deposit:1]             -> \(last)")
        return "before/after hooks saw deposit:100 (balance \(first)); an instead-hook on one "
            + "instance refused 1000 there (\(refused)) while the other took it (\(other)); after "
            + "unhooking, the IMP is \(restored == original ? "the original again" : "NOT the original") "
            + "and deposit:1 gives \(last)."
    }

    private static let staticDescription: StaticString = "a calculator class"
}

extension CString {
    /// A C string for a static string literal.
    init(_ s: StaticString) {
        self.init(UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self))
    }
}
