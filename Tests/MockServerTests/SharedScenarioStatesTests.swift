import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MockServer

/// The replicas' shared scenario states (issue 47) against a real `redis-server`: a commit applies only
/// at the snapshot's version, a stale one returns the fresh states and changes nothing, sequence positions
/// are taken one per serve, and of 200 concurrent commits to one scenario step (over 8 connections, as 8
/// replicas would make them) exactly one moves the state.
@Suite(
  "Shared scenario states", .serialized, .enabled(if: RedisServer.installed, "redis-server is not installed"))
struct SharedScenarioStatesTests {
  @Test func aCommitAppliesOnlyAtTheSnapshotsVersion() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let states = SharedScenarioStates(
      connection: RedisConnection(endpoint: try RedisEndpoint(url: redis.url)))
    let start = try states.snapshot()
    #expect(start.version == 0 && start.state(of: "cart") == "Started")
    let step = (name: "cart", required: String?("Started"), next: "Has item")
    guard
      case .committed(_, let after) = try states.commit(
        basedOn: start.version, stubID: "add", countsServes: false, transition: step)
    else {
      Issue.record("the first commit did not apply")
      return
    }
    #expect(after.state(of: "cart") == "Has item" && after.version == 1)
    // A replica still at version 0 is told the fresh states and changes nothing.
    let stale = try states.commit(basedOn: 0, stubID: "add", countsServes: false, transition: step)
    #expect(stale == .stale(after))
    // At the current version, a transition whose required state does not hold commits without moving.
    let other = (name: "cart", required: String?("Started"), next: "Other")
    guard
      case .committed(_, let unchanged) = try states.commit(
        basedOn: after.version, stubID: "add", countsServes: false, transition: other)
    else {
      Issue.record("a commit at the current version did not apply")
      return
    }
    #expect(unchanged == after)
    try states.set("cart", to: "Checked out")
    #expect(try states.snapshot().state(of: "cart") == "Checked out")
    try states.reset()
    #expect(try states.snapshot().states.isEmpty)
  }

  @Test func sequencePositionsAreTakenOnePerServe() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let states = SharedScenarioStates(
      connection: RedisConnection(endpoint: try RedisEndpoint(url: redis.url)))
    var taken: [Int] = []
    for _ in 0..<3 {
      guard
        case .committed(let index, _) = try states.commit(
          basedOn: 0, stubID: "seq", countsServes: true, transition: nil)
      else {
        Issue.record("a sequence serve did not commit")
        return
      }
      taken.append(index)
    }
    #expect(taken == [0, 1, 2])
  }

  @Test func ofConcurrentCommitsToOneStepExactlyOneMovesTheState() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let endpoint = try RedisEndpoint(url: redis.url)
    let replicas = (0..<8).map { _ in SharedScenarioStates(connection: RedisConnection(endpoint: endpoint)) }
    let start = try replicas[0].snapshot()
    let outcomes = Mutex<(committedMoves: Int, stale: Int, failures: [String])>((0, 0, []))
    DispatchQueue.concurrentPerform(iterations: 200) { i in
      let replica = replicas[i % replicas.count]
      do {
        let outcome = try replica.commit(
          basedOn: start.version, stubID: "step", countsServes: false,
          transition: (name: "flow", required: "Started", next: "Done"))
        outcomes.withLock { o in
          switch outcome {
          case .committed(_, let snapshot) where snapshot.version != start.version: o.committedMoves += 1
          case .committed: o.failures.append("committed without moving")
          case .stale(let snapshot):
            if snapshot.state(of: "flow") == "Done" {
              o.stale += 1
            } else {
              o.failures.append("stale \(snapshot)")
            }
          }
        }
      } catch {
        outcomes.withLock { $0.failures.append("\(error)") }
      }
    }
    let result = outcomes.withLock { $0 }
    #expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
    #expect(result.committedMoves == 1, "exactly one request advances the step")
    #expect(result.stale == 199, "every other one is told the new state")
    #expect(try replicas[3].snapshot().state(of: "flow") == "Done")
  }
  /// One replica's commits over its pool (`RedisConnectionPool`, as `MockService` makes it): 200
  /// concurrent serves of a sequence stub take the positions 0...199 once each, one of 200 concurrent
  /// commits to a scenario step moves it, and the replica never holds more than the pool's connections.
  @Test func commitsOverOneReplicasPoolAreExactlyOnceAndUseAtMostItsConnections() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let endpoint = try RedisEndpoint(url: redis.url)
    let pool = RedisConnectionPool(
      (0..<SharedScenarioStates.commitConnections).map { _ in RedisConnection(endpoint: endpoint) })
    let states = SharedScenarioStates(pool: pool)
    let start = try states.snapshot()
    let results = Mutex<(positions: [Int], moves: Int, failures: [String])>(([], 0, []))
    DispatchQueue.concurrentPerform(iterations: 200) { _ in
      do {
        let served = try states.commit(basedOn: nil, stubID: "seq", countsServes: true, transition: nil)
        let step = try states.commit(
          basedOn: start.version, stubID: "step", countsServes: false,
          transition: (name: "flow", required: "Started", next: "Done"))
        results.withLock { r in
          if case .committed(let position, _) = served { r.positions.append(position) }
          if case .committed(_, let snapshot) = step, snapshot.version != start.version { r.moves += 1 }
        }
      } catch {
        results.withLock { $0.failures.append("\(error)") }
      }
    }
    let result = results.withLock { $0 }
    #expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
    #expect(result.positions.sorted() == Array(0..<200), "each sequence position taken once")
    #expect(result.moves == 1, "exactly one commit moves the step")
    let clients = try RedisConnection(endpoint: endpoint).command(["CLIENT", "LIST"]).text ?? ""
    let count = clients.split(separator: "\n").count - 1  // without this query's own connection
    #expect((1...SharedScenarioStates.commitConnections).contains(count), "\(count) connections")
  }
}
