import ArgumentParser
import DynamicRuntime

/// `forwarding demo`: classes, sends, forwarding, hooks and throttling, narrated.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show class registration, message sends, forwarding, hooks, throttling and run loops.")

    @Option(help: "Which part to show: all, runtime, forwarding, hooks, throttle, runloop.")
    var part: String = "all"

    func run() throws {
        let parts = part == "all" ? ["runtime", "forwarding", "hooks", "throttle", "runloop"] : [part]
        for p in parts {
            switch p {
            case "runtime": try runtimeDemo()
            case "forwarding": try forwardingDemo()
            case "hooks": try hooksDemo()
            case "throttle": try ThrottleDemo.run()
            case "runloop": try RunLoopDemo.run()
            default: throw ValidationError("unknown part '\(p)'; use all, runtime, forwarding, hooks, throttle or runloop")
            }
        }
    }

    private func heading(_ title: String) {
        print("\n== \(title) " + String(repeating: "=", count: max(0, 60 - title.count)))
    }

    private func runtimeDemo() throws {
        heading("classes and message sends")
        let calc = try RuntimeClass(name: "Calculator", ivars: [("total", .int64)])
        print("registered \(calc.name): instance size \(calc.instanceSize) bytes, metaclass \(calc.metaclass)")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        try calc.addMethod("accumulate:") { (self_: ObjectRef, n: Int) -> Int in
            let total = try self_.value(ofIvar: "total", as: Int.self) + n
            try self_.setValue(total, forIvar: "total")
            return total
        }
        try calc.metaclass.addMethod("describe") { (_: ObjectRef) in CString(Demo.staticDescription) }
        let c = try calc.createInstance()
        let sum: Int = try c.send("add:to:", 1, 2)
        print("[c add:1 to:2]            -> \(sum)          (typed send, direct call)")
        print("[c add:1 to:2]            -> \(try c.send("add:to:", 1, 2))          (dynamic send, ffi_call)")
        _ = try c.send("accumulate:", 5, as: Int.self)
        print("[c accumulate:5] twice    -> \(try c.send("accumulate:", 5, as: Int.self))         (ivar 'total')")
        print("[Calculator describe]     -> \((try calc.send("describe", as: CString.self)).string ?? "")")
        do {
            try c.send("divide:by:", 1, 0)
        } catch {
            print("[c divide:1 by:0]         -> error: \(error)")
        }
        do {
            let _: Int = try c.send("add:to:", 1.5, 2)
        } catch {
            print("[c add:1.5 to:2]          -> error: \(error)")
        }
    }

    private func forwardingDemo() throws {
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
        print("[lazy seven]              -> \(try l.send("seven", as: Int.self))")
        print("[lazy seven] again        -> \(try l.send("seven", as: Int.self))   (now a real method)")

        let relay = try RuntimeClass(name: "Relay", ivars: [("next", .object)])
        try relay.setForwardingTarget { recv, sel in
            print("  forwardingTargetForSelector: \(sel) -> the greeter")
            return try recv.value(ofIvar: "next", as: ObjectRef.self)
        }
        let r = try relay.createInstance()
        try r.setValue(g.ref, forIvar: "next")
        print("[relay greet:4]           -> \(try r.send("greet:", 4, as: Int.self))")

        let logging = try Proxy.makeClass(name: "LoggingProxy") { invocation, proceed in
            print("  forwardInvocation: \(invocation)")
            try proceed()
            print("  ... returned \(invocation.returnValue)")
        }
        let proxy = try Proxy.create(logging, wrapping: g)
        print("[proxy greet:5]           -> \(try proxy.send("greet:", 5, as: Int.self))")
        do {
            try proxy.send("wave")
        } catch {
            print("[proxy wave]              -> error: \(error)")
        }
    }

    private func hooksDemo() throws {
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
        print("[a deposit:100]           -> \(try a.send("deposit:", 100, as: Int.self))")
        let cap = try a.hook("deposit:", .instead) { ctx in
            let amount = try ctx.argument(at: 0, as: Int.self)
            if amount > 500 {
                print("  instead: refusing \(amount) on this account only")
                try ctx.setReturnValue(-1)
            } else {
                try ctx.proceed()
            }
        }
        print("[a deposit:1000]          -> \(try a.send("deposit:", 1000, as: Int.self))")
        print("[b deposit:1000]          -> \(try b.send("deposit:", 1000, as: Int.self))   (other instance untouched)")
        cap.remove()
        before.remove()
        after.remove()
        let restored = account.ownMethod(for: "deposit:")!.implementation
        print("unhooked: IMP \(restored == original ? "==" : "!=") original (\(restored))")
        print("[a deposit:1]             -> \(try a.send("deposit:", 1, as: Int.self))")
    }

    private static let staticDescription: StaticString = "a calculator class"
}

extension CString {
    /// A C string for a static string literal.
    init(_ s: StaticString) {
        self.init(UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self))
    }
}
