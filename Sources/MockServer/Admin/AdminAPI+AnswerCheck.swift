import HTTPCore

extension ResponsePlan {
  /// This plan with every complete response checked by `check` (awaited and deferred plans when they
  /// arrive). An answer that does not fit is replaced by a 500 naming the violation, and the same text
  /// goes to standard error, so the test that made the call fails where it made it.
  package func checkingAdminAnswers(_ check: @escaping AdminAnswerCheck, method: String, rawPath: String)
    -> ResponsePlan
  {
    var plan = self
    for k in plan.steps.indices {
      switch plan.steps[k] {
      case .response(let head, let body):
        if let problem = check(method, rawPath, head.status.code, head.headers, body) {
          let text = "admin response check: \(problem)"
          StandardError.write(Array((text + "\n").utf8))
          return AdminAPI.error(
            .internalServerError, title: "Admin response does not match openapi.json", detail: problem)
        }
      case .awaiting:
        plan.steps[k] = plan.steps[k].mapAwaitedPlan {
          $0.checkingAdminAnswers(check, method: method, rawPath: rawPath)
        }
      default:
        continue
      }
    }
    return plan
  }
}
