import ArgumentParser
import DynamicRuntime

/// `forwarding demo`: classes, sends and forwarding, narrated.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show class registration, message sends and forwarding.")

    func run() throws {
        let calc = try RuntimeClass(name: "Calculator", ivars: [("total", .int64)])
        print("registered class \(calc.name) (instance size \(calc.instanceSize) bytes)")
        try calc.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let c = try calc.createInstance()
        let sum: Int = try c.send("add:to:", 1, 2)
        print("[c add:1 to:2] -> \(sum)")
        do {
            try c.send("divide:by:", 1, 0)
        } catch {
            print("[c divide:1 by:0] -> error: \(error)")
        }
    }
}
