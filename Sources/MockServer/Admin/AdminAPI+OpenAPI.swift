import HTTPCore
import MockJSON

extension AdminAPI {
  /// `GET /__admin/openapi.json` (and `/__admin/docs`): the OpenAPI 3 document of this admin API.
  static func openAPIDocument() -> ResponsePlan {
    .respond(status: .ok, headers: ["Content-Type": "application/json"], body: Array(openAPIText.utf8))
  }

  /// The OpenAPI 3.0 document of the admin API: every route of ``AdminAPI/route(_:)``, with the shapes of
  /// its answers (a test validates the answers of a run through every route against it).
  static let openAPIText = #"""
    {
      "openapi": "3.0.3",
      "info": {
        "title": "MockServer admin API",
        "version": "1",
        "description": "WireMock-compatible admin API of mockserver (docs/admin-api.md). Every route may be scoped to a session with the X-Mock-Session header (--session-header) or the /__session/{id}/ path prefix; routes that act on the whole server then answer 400 (docs/scaling.md#sessions)."
      },
      "paths": {
        "/__admin/mappings": {
          "get": {
            "summary": "List stub mappings",
            "parameters": [
              {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 0}},
              {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}}
            ],
            "responses": {
              "200": {
                "description": "Stub mappings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMappings"}}
                }
              },
              "400": {
                "description": "Bad query",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "post": {
            "summary": "Create a stub mapping (persistent: true writes its file)",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "201": {
                "description": "Created",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
                }
              },
              "400": {
                "description": "Invalid stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "422": {
                "description": "A stub mapping that is not JSON or not valid (WireMock's shape: code 10, a JSON pointer, the problem)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "500": {
                "description": "Write failed",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Delete every stub mapping",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/new": {
          "post": {
            "summary": "Create a stub mapping (old path)",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "201": {
                "description": "Created",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
                }
              },
              "400": {
                "description": "Invalid stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "422": {
                "description": "A stub mapping that is not JSON or not valid (WireMock's shape: code 10, a JSON pointer, the problem)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/{id}": {
          "get": {
            "summary": "One stub mapping",
            "parameters": [
              {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "The stub",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
                }
              },
              "404": {
                "description": "No such stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "put": {
            "summary": "Replace a stub mapping (rewrites the file of a persistent one)",
            "parameters": [
              {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Replaced",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
                }
              },
              "400": {
                "description": "Invalid stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "422": {
                "description": "A stub mapping that is not JSON or not valid (WireMock's shape: code 10, a JSON pointer, the problem)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "404": {
                "description": "No such stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          },
          "delete": {
            "summary": "Delete a stub mapping (removes a persistent one from its file)",
            "parameters": [
              {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "404": {
                "description": "No such stub",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/save": {
          "post": {
            "summary": "Write runtime stubs and runtime edits of file stubs to the fixtures folder",
            "responses": {
              "200": {
                "description": "What was written",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "properties": {
                        "saved": {
                          "type": "array",
                          "items": {
                            "type": "object",
                            "required": ["id", "file"],
                            "properties": {"id": {"type": "string"}, "file": {"type": "string"}}
                          }
                        },
                        "rewritten": {"type": "array", "items": {"type": "string"}}
                      }
                    }
                  }
                }
              },
              "409": {
                "description": "No fixtures folder",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "500": {
                "description": "Write failed",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/mappings/reset": {
          "post": {
            "summary": "Back to the fixtures folder's stubs",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "500": {
                "description": "Fixture errors",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/mappings/import": {
          "post": {
            "summary": "Import stub mappings",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object",
                    "required": ["mappings"],
                    "properties": {
                      "mappings": {
                        "type": "array",
                        "items": {"$ref": "#/components/schemas/StubMapping"}
                      },
                      "importOptions": {"type": "object"}
                    }
                  }
                }
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Invalid import",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "422": {
                "description": "A stub mapping that is not JSON or not valid (WireMock's shape: code 10, a JSON pointer, the problem)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/find-by-metadata": {
          "post": {
            "summary": "Stubs whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "200": {
                "description": "Stub mappings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMappings"}}
                }
              },
              "400": {
                "description": "Invalid matcher",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/mappings/remove-by-metadata": {
          "post": {
            "summary": "Delete stubs whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Invalid matcher",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/remove": {
          "post": {
            "summary": "Delete stubs with this id or the same request pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/StubMapping"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Invalid pattern",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/mappings/unmatched": {
          "get": {
            "summary": "Stubs no journaled request matched",
            "responses": {
              "200": {
                "description": "Stub mappings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/StubMappings"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Delete the stubs no journaled request matched",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "500": {"$ref": "#/components/responses/WriteFailed"}
            }
          }
        },
        "/__admin/requests": {
          "get": {
            "summary": "Journal, newest first",
            "parameters": [
              {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 0}},
              {"name": "since", "in": "query", "schema": {"type": "string"}},
              {"name": "unmatched", "in": "query", "schema": {"type": "boolean"}},
              {"name": "matchingStub", "in": "query", "schema": {"type": "string"}}
            ],
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Journal",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["requests", "meta"],
                      "properties": {
                        "requests": {
                          "type": "array",
                          "items": {"$ref": "#/components/schemas/ServeEvent"}
                        },
                        "meta": {"$ref": "#/components/schemas/Meta"},
                        "requestJournalDisabled": {"type": "boolean"}
                      }
                    }
                  }
                }
              },
              "400": {
                "description": "Bad query",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Clear the journal",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/reset": {
          "post": {
            "summary": "Clear the journal",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/count": {
          "post": {
            "summary": "Count requests matching a pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/RequestPattern"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Count",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["count"],
                      "properties": {
                        "count": {"type": "integer", "minimum": 0},
                        "exact": {"type": "boolean"},
                        "evicted": {"type": "integer"}
                      }
                    }
                  }
                }
              },
              "400": {
                "description": "Invalid pattern",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/find": {
          "post": {
            "summary": "Requests matching a pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/RequestPattern"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Requests",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/Requests"}}
                }
              },
              "400": {
                "description": "Invalid pattern",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/remove": {
          "post": {
            "summary": "Remove requests matching a pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/RequestPattern"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Removed requests",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["requests"],
                      "properties": {
                        "requests": {
                          "type": "array",
                          "items": {"$ref": "#/components/schemas/ServeEvent"}
                        }
                      }
                    }
                  }
                }
              },
              "400": {
                "description": "Invalid pattern",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/remove-by-metadata": {
          "post": {
            "summary": "Remove requests served by stubs whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Invalid matcher",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/unmatched": {
          "get": {
            "summary": "Unmatched requests",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Requests",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/Requests"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/unmatched/near-misses": {
          "get": {
            "summary": "Near misses of unmatched requests",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Near misses",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/NearMisses"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/requests/{id}": {
          "get": {
            "summary": "One journal entry",
            "parameters": [
              {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Entry",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/ServeEvent"}}
                }
              },
              "404": {
                "description": "No such entry",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Remove one journal entry",
            "parameters": [
              {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "404": {
                "description": "No such entry",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/near-misses/request": {
          "post": {
            "summary": "Stubs nearest to a logged request",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/LoggedRequest"}}
              }
            },
            "responses": {
              "200": {
                "description": "Near misses",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/NearMisses"}}
                }
              },
              "400": {
                "description": "Invalid request",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/near-misses/request-pattern": {
          "post": {
            "summary": "Journaled requests nearest to a pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/RequestPattern"}}
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Near misses",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/NearMisses"}}
                }
              },
              "400": {
                "description": "Invalid pattern",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/scenarios": {
          "get": {
            "summary": "Scenarios and their states",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Scenarios",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["scenarios"],
                      "properties": {
                        "scenarios": {
                          "type": "array",
                          "items": {"$ref": "#/components/schemas/Scenario"}
                        }
                      }
                    }
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/state-extension/contexts": {
          "get": {
            "summary": "Names of the state extension's contexts (docs/stateful.md)",
            "responses": {
              "200": {
                "description": "Context names, sorted",
                "content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}
              },
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Delete every context",
            "responses": {
              "204": {"description": "Deleted"},
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/state-extension/contexts/{name}": {
          "get": {
            "summary": "One context: properties, list and update count",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "The context",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/StateContext"}}}
              },
              "404": {
                "description": "No such context",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "delete": {
            "summary": "Delete one context (an unknown name is no error)",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "204": {"description": "Deleted"},
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/message-mappings": {
          "get": {
            "summary": "WireMock 4 message stub mappings (message-mappings/ and runtime ones; docs/streaming.md)",
            "responses": {
              "200": {
                "description": "Message stub mappings",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageStubMappings"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "post": {
            "summary": "Add a message stub mapping (not persistent)",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "201": {
                "description": "The mapping, with its id",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageStubMapping"
                    }
                  }
                }
              },
              "422": {
                "description": "Not a valid message stub mapping (JSON path, what was expected)",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "delete": {
            "summary": "Delete every message stub mapping",
            "responses": {
              "200": {
                "description": "Done",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/message-mappings/find-by-metadata": {
          "post": {
            "summary": "Message stub mappings whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Message stub mappings",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageStubMappings"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/message-mappings/remove-by-metadata": {
          "post": {
            "summary": "Delete message stub mappings whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Done",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/message-mappings/{id}": {
          "get": {
            "summary": "One message stub mapping",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "The mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageStubMapping"
                    }
                  }
                }
              },
              "404": {
                "description": "No such mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "put": {
            "summary": "Replace a message stub mapping (the path's id wins)",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageStubMapping"
                    }
                  }
                }
              },
              "404": {
                "description": "No such mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "422": {
                "description": "Not a valid message stub mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "delete": {
            "summary": "Delete a message stub mapping",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "Done",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "404": {
                "description": "No such mapping",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/channels": {
          "get": {
            "summary": "Open WebSocket channels",
            "responses": {
              "200": {
                "description": "Channels",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Channels"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/channels/send": {
          "post": {
            "summary": "Send a message to every open channel whose upgrade request matches",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The channels messaged",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/SendResult"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/channels/{id}": {
          "get": {
            "summary": "One open channel",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "The channel",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Channel"
                    }
                  }
                }
              },
              "404": {
                "description": "No open channel with this id",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "delete": {
            "summary": "Close a channel (close code 1001)",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "Closing",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "404": {
                "description": "No open channel with this id",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages": {
          "get": {
            "summary": "The message journal (received and sent WebSocket messages)",
            "parameters": [
              {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 0}}
            ],
            "responses": {
              "200": {
                "description": "Message serve events",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvents"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "delete": {
            "summary": "Clear the message journal",
            "responses": {
              "200": {
                "description": "Done",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/count": {
          "post": {
            "summary": "Count message events matching a message pattern {channel?, body?}",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The count",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": [
                        "count"
                      ],
                      "properties": {
                        "count": {
                          "type": "integer",
                          "minimum": 0
                        }
                      }
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/find": {
          "post": {
            "summary": "Message events matching a message pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "Message serve events",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvents"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/remove": {
          "post": {
            "summary": "Remove message events matching a message pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The events removed",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvents"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/remove-by-metadata": {
          "post": {
            "summary": "Remove message events of mappings whose metadata matches",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The events removed",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvents"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/wait": {
          "post": {
            "summary": "Wait up to timeoutMillis for a message event matching pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The first matching event, or {} when none came in time",
                "content": {
                  "application/json": {
                    "schema": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/MessageServeEvent"
                        },
                        {
                          "$ref": "#/components/schemas/Empty"
                        }
                      ]
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/wait-for-count": {
          "post": {
            "summary": "Wait up to timeoutMillis for count message events matching pattern",
            "requestBody": {
              "required": true,
              "content": {
                "application/json": {
                  "schema": {
                    "type": "object"
                  }
                }
              }
            },
            "responses": {
              "200": {
                "description": "The matching events (fewer at the deadline)",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvents"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/messages/{id}": {
          "get": {
            "summary": "One message event",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "The event",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/MessageServeEvent"
                    }
                  }
                }
              },
              "404": {
                "description": "No such event",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          },
          "delete": {
            "summary": "Remove one message event",
            "parameters": [
              {
                "name": "id",
                "in": "path",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            ],
            "responses": {
              "200": {
                "description": "Done",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Empty"
                    }
                  }
                }
              },
              "404": {
                "description": "No such event",
                "content": {
                  "application/json": {
                    "schema": {
                      "$ref": "#/components/schemas/Errors"
                    }
                  }
                }
              },
              "400": {
                "$ref": "#/components/responses/BadRequest"
              },
              "401": {
                "$ref": "#/components/responses/Unauthorized"
              },
              "403": {
                "$ref": "#/components/responses/Forbidden"
              }
            }
          }
        },
        "/__admin/scenarios/reset": {
          "post": {
            "summary": "Every scenario back to Started",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/scenarios/{name}/state": {
          "put": {
            "summary": "Set a scenario's state",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "requestBody": {
              "required": false,
              "content": {
                "application/json": {
                  "schema": {"type": "object", "properties": {"state": {"type": "string"}}}
                }
              }
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Unknown state",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "404": {
                "description": "No such scenario",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/settings": {
          "get": {
            "summary": "Global settings",
            "responses": {
              "200": {
                "description": "Settings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/SettingsEnvelope"}}
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          },
          "post": {
            "summary": "Replace the global settings",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "200": {
                "description": "Settings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/SettingsEnvelope"}}
                }
              },
              "400": {
                "description": "Invalid settings",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"}
            }
          },
          "put": {
            "summary": "Replace the global settings",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "200": {
                "description": "Settings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/SettingsEnvelope"}}
                }
              },
              "400": {
                "description": "Invalid settings",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"}
            }
          },
          "patch": {
            "summary": "Change the settings given",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "200": {
                "description": "Settings",
                "content": {
                  "application/json": {"schema": {"$ref": "#/components/schemas/SettingsEnvelope"}}
                }
              },
              "400": {
                "description": "Invalid settings",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"},
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"}
            }
          }
        },
        "/__admin/files": {
          "get": {
            "summary": "Body files under __files/",
            "responses": {
              "200": {
                "description": "File names",
                "content": {
                  "application/json": {"schema": {"type": "array", "items": {"type": "string"}}}
                }
              },
              "409": {
                "description": "No fixtures folder",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/files/{name}": {
          "get": {
            "summary": "A body file's bytes",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "The file",
                "content": {
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                  "*/*": {"schema": {}}
                }
              },
              "400": {
                "description": "Bad name",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "403": {
                "description": "Outside __files",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "404": {
                "description": "No such file",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "409": {"$ref": "#/components/responses/NoFixturesFolder"}
            }
          },
          "put": {
            "summary": "Write a body file",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "requestBody": {"required": true, "content": {"*/*": {"schema": {}}}},
            "responses": {
              "200": {
                "description": "The content written",
                "content": {
                  "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
                }
              },
              "400": {
                "description": "Bad name",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "403": {
                "description": "Outside __files",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "500": {"$ref": "#/components/responses/WriteFailed"},
              "409": {"$ref": "#/components/responses/NoFixturesFolder"}
            }
          },
          "delete": {
            "summary": "Remove a body file",
            "parameters": [
              {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "400": {
                "description": "Bad name",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "403": {
                "description": "Outside __files",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "404": {
                "description": "No such file",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "500": {"$ref": "#/components/responses/WriteFailed"},
              "409": {"$ref": "#/components/responses/NoFixturesFolder"}
            }
          }
        },
        "/__admin/reset": {
          "post": {
            "summary": "Stubs back to files, journal cleared, scenarios reset",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "500": {
                "description": "Fixture errors",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/health": {
          "get": {
            "summary": "Health",
            "responses": {
              "200": {
                "description": "Healthy",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["status", "version"],
                      "properties": {
                        "status": {"type": "string"},
                        "message": {"type": "string"},
                        "version": {"type": "string"},
                        "uptimeInSeconds": {"type": "integer"},
                        "timestamp": {"type": "string"},
                        "droppedLogLines": {
                          "type": "integer",
                          "minimum": 0,
                          "description": "Log lines dropped since start because standard error did not take them (a pipe nobody reads, or a closed one)"
                        },
                        "refusedDelayedMessageActions": {
                          "type": "integer",
                          "minimum": 1,
                          "description": "HTTP-triggered message actions not run because 10,000 delayed ones were already waiting (absent when none)"
                        },
                        "stateStore": {"$ref": "#/components/schemas/StateStoreHealth"}
                      }
                    }
                  }
                }
              },
              "503": {
                "description": "With --state-store: the shared state store cannot be reached (status unhealthy; plain stubs are still served)",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["status", "message", "version", "stateStore"],
                      "properties": {
                        "status": {"type": "string", "enum": ["unhealthy"]},
                        "message": {"type": "string"},
                        "version": {"type": "string"},
                        "uptimeInSeconds": {"type": "integer"},
                        "timestamp": {"type": "string"},
                        "droppedLogLines": {"type": "integer", "minimum": 0},
                        "refusedDelayedMessageActions": {"type": "integer", "minimum": 1},
                        "stateStore": {"$ref": "#/components/schemas/StateStoreHealth"}
                      }
                    }
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/version": {
          "get": {
            "summary": "Version",
            "responses": {
              "200": {
                "description": "Version",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["version"],
                      "properties": {"version": {"type": "string"}}
                    }
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/shutdown": {
          "post": {
            "summary": "Stop the server",
            "responses": {
              "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "501": {
                "description": "No shutdown hook",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/recordings/status": {
          "get": {
            "summary": "Recording state (WireMock's NeverStarted, Recording, Stopped)",
            "responses": {
              "200": {
                "description": "State",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["status"],
                      "properties": {"status": {"type": "string", "enum": ["NeverStarted", "Recording", "Stopped"]}}
                    }
                  }
                }
              },
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/recordings/start": {
          "post": {
            "summary": "Start recording through a target (record spec with targetBaseUrl)",
            "requestBody": {
              "required": true,
              "content": {"application/json": {"schema": {"type": "object", "required": ["targetBaseUrl"]}}}
            },
            "responses": {
              "200": {
                "description": "Recording",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}}
              },
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "409": {
                "description": "Already recording",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/recordings/stop": {
          "post": {
            "summary": "Stop recording: the stubs made from what was proxied",
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Stubs (or their ids, with outputFormat IDS)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RecordedStubs"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/recordings/snapshot": {
          "post": {
            "summary": "Stubs from the proxied exchanges still in the journal (optional record spec)",
            "requestBody": {
              "required": false,
              "content": {"application/json": {"schema": {"type": "object"}}}
            },
            "responses": {
              "503": {"$ref": "#/components/responses/SharedStateUnavailable"},
              "200": {
                "description": "Stubs (or their ids, with outputFormat IDS)",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/RecordedStubs"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/dashboard": {
          "get": {
            "summary": "The dashboard page (docs/dashboard.md)",
            "responses": {
              "200": {
                "description": "One self-contained HTML page",
                "content": {"text/html": {"schema": {"type": "string"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/dashboard/state": {
          "get": {
            "summary": "What the dashboard shows besides the live log",
            "responses": {
              "200": {
                "description": "Stubs with origin and hits, scenarios, settings, last reload, feed and journal counts",
                "content": {
                  "application/json": {
                    "schema": {
                      "type": "object",
                      "required": ["stubs", "scenarios", "settings"],
                      "properties": {
                        "stubs": {"type": "array", "items": {"type": "object"}},
                        "scenarios": {"type": "array", "items": {"type": "object"}},
                        "settings": {"type": "object"},
                        "reload": {"type": "object", "nullable": true},
                        "events": {"type": "object"},
                        "journal": {"type": "object"},
                        "version": {"type": "string"}
                      }
                    }
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/events": {
          "get": {
            "summary": "The live request log as Server-Sent Events",
            "parameters": [
              {"name": "heartbeat", "in": "query", "schema": {"type": "integer", "minimum": 100, "maximum": 300000}},
              {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}}
            ],
            "responses": {
              "200": {
                "description": "An event stream (one event per completed request)",
                "content": {"text/event-stream": {"schema": {"type": "string"}}}
              },
              "503": {
                "description": "Too many viewers",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/openapi.json": {
          "get": {
            "summary": "This document",
            "responses": {
              "200": {
                "description": "OpenAPI 3 document",
                "content": {
                  "application/json": {
                    "schema": {"type": "object", "required": ["openapi", "paths"]}
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        },
        "/__admin/docs": {
          "get": {
            "summary": "This document (alias)",
            "responses": {
              "200": {
                "description": "OpenAPI 3 document",
                "content": {
                  "application/json": {
                    "schema": {"type": "object", "required": ["openapi", "paths"]}
                  }
                }
              },
              "400": {"$ref": "#/components/responses/BadRequest"},
              "401": {"$ref": "#/components/responses/Unauthorized"},
              "403": {"$ref": "#/components/responses/Forbidden"}
            }
          }
        }
      },
      "components": {
        "responses": {
          "SharedStateUnavailable": {
            "description": "With --state-store: the shared state store cannot be reached. A change (of the stubs, the scenarios, the journal, the recording or the state extension's contexts) was refused: nothing changed, here or in the store. A read that answers for every replica (the journal queries, counts, finds, near misses; the scenarios; the recording's status and snapshot; the contexts) is refused rather than answered from this replica alone. The error title is Shared state unavailable",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          },
          "WriteFailed": {
            "description": "The change is served but a fixture file could not be written or removed",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          },
          "NoFixturesFolder": {
            "description": "The server was started without a fixtures folder",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          },
          "BadRequest": {
            "description": "A path with invalid percent-encoding, a bad query or body",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          },
          "Unauthorized": {
            "description": "--admin-token is set and the request has no valid Authorization: Bearer token",
            "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          },
          "Forbidden": {
            "description": "Not a loopback client, or a request a web page may have sent (Host, Origin, Content-Type)",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Errors"}}}
          }
        },
        "schemas": {
          "StateStoreHealth": {
            "type": "object",
            "description": "The shared state store (--state-store): its URL without the password, up or down, and why when down",
            "required": ["url", "status"],
            "properties": {
              "url": {"type": "string"},
              "status": {"type": "string", "enum": ["up", "down"]},
              "detail": {"type": "string"}
            }
          },
          "MessageStubMapping": {
            "type": "object",
            "required": [
              "id"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "name": {
                "type": "string"
              },
              "priority": {
                "type": "integer"
              },
              "trigger": {
                "type": "object"
              },
              "actions": {
                "type": "array",
                "items": {
                  "type": "object"
                }
              },
              "metadata": {
                "type": "object"
              }
            }
          },
          "MessageStubMappings": {
            "type": "object",
            "required": [
              "messageMappings",
              "meta"
            ],
            "properties": {
              "messageMappings": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/MessageStubMapping"
                }
              },
              "meta": {
                "$ref": "#/components/schemas/Meta"
              }
            }
          },
          "Channel": {
            "type": "object",
            "required": [
              "id",
              "type",
              "initiatingRequest",
              "open"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "type": {
                "type": "string",
                "enum": [
                  "websocket"
                ]
              },
              "initiatingRequest": {
                "$ref": "#/components/schemas/LoggedRequest"
              },
              "open": {
                "type": "boolean"
              }
            }
          },
          "Channels": {
            "type": "object",
            "required": [
              "channels",
              "meta"
            ],
            "properties": {
              "channels": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Channel"
                }
              },
              "meta": {
                "$ref": "#/components/schemas/Meta"
              }
            }
          },
          "SendResult": {
            "type": "object",
            "required": [
              "channelsMessaged",
              "channels"
            ],
            "properties": {
              "channelsMessaged": {
                "type": "integer",
                "minimum": 0
              },
              "channels": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/Channel"
                }
              }
            }
          },
          "MessageServeEvent": {
            "type": "object",
            "required": [
              "id",
              "eventType",
              "channel",
              "message",
              "wasMatched",
              "timestamp"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "eventType": {
                "type": "string",
                "enum": [
                  "received",
                  "sent"
                ]
              },
              "channel": {
                "type": "object",
                "required": [
                  "id",
                  "type",
                  "initiatingRequest"
                ],
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "type": {
                    "type": "string"
                  },
                  "initiatingRequest": {
                    "$ref": "#/components/schemas/LoggedRequest"
                  }
                }
              },
              "message": {
                "type": "string"
              },
              "x-base64": {
                "type": "string"
              },
              "x-truncated": {
                "type": "boolean"
              },
              "x-size": {
                "type": "integer",
                "minimum": 0
              },
              "wasMatched": {
                "type": "boolean"
              },
              "stubMapping": {
                "type": "object",
                "required": [
                  "id"
                ],
                "properties": {
                  "id": {
                    "type": "string"
                  }
                }
              },
              "timestamp": {
                "type": "string"
              }
            }
          },
          "MessageServeEvents": {
            "type": "object",
            "required": [
              "messageServeEvents"
            ],
            "properties": {
              "messageServeEvents": {
                "type": "array",
                "items": {
                  "$ref": "#/components/schemas/MessageServeEvent"
                }
              }
            }
          },
          "Empty": {"type": "object", "maxProperties": 0},
          "Meta": {
            "type": "object",
            "required": ["total"],
            "properties": {"total": {"type": "integer", "minimum": 0}}
          },
          "Errors": {
            "type": "object",
            "required": ["errors"],
            "properties": {
              "errors": {
                "type": "array",
                "minItems": 1,
                "items": {
                  "type": "object",
                  "required": ["code", "title", "detail"],
                  "properties": {
                    "code": {"type": "integer"},
                    "title": {"type": "string"},
                    "detail": {"type": "string"},
                    "source": {"type": "object", "properties": {"pointer": {"type": "string"}}}
                  }
                }
              }
            }
          },
          "StubMapping": {
            "type": "object",
            "properties": {
              "id": {"type": "string"},
              "uuid": {"type": "string"},
              "name": {"type": "string"},
              "priority": {"type": "integer", "minimum": 1},
              "persistent": {"type": "boolean"},
              "request": {"$ref": "#/components/schemas/RequestPattern"},
              "response": {"type": "object"},
              "metadata": {"type": "object"},
              "scenarioName": {"type": "string"},
              "requiredScenarioState": {"type": "string"},
              "newScenarioState": {"type": "string"},
              "serveEventListeners": {"type": "array"},
              "postServeActions": {},
              "x-cors": {"type": "boolean"}
            }
          },
          "RecordedStubs": {
            "type": "object",
            "properties": {
              "mappings": {"type": "array", "items": {"$ref": "#/components/schemas/StubMapping"}},
              "ids": {"type": "array", "items": {"type": "string"}}
            }
          },
          "StubMappings": {
            "type": "object",
            "required": ["mappings", "meta"],
            "properties": {
              "mappings": {"type": "array", "items": {"$ref": "#/components/schemas/StubMapping"}},
              "meta": {"$ref": "#/components/schemas/Meta"}
            }
          },
          "RequestPattern": {
            "type": "object",
            "properties": {
              "method": {
                "oneOf": [
                  {"type": "string"},
                  {
                    "type": "object",
                    "properties": {
                      "oneOf": {"type": "array", "items": {"type": "string"}},
                      "noneOf": {"type": "array", "items": {"type": "string"}}
                    }
                  }
                ]
              },
              "url": {"type": "string"},
              "urlPath": {"type": "string"},
              "urlPattern": {"type": "string"},
              "urlPathPattern": {"type": "string"},
              "urlPathTemplate": {"type": "string"}
            }
          },
          "LoggedRequest": {
            "type": "object",
            "required": ["url"],
            "properties": {
              "id": {"type": "string"},
              "method": {"type": "string"},
              "url": {"type": "string"},
              "absoluteUrl": {"type": "string"},
              "headers": {"type": "object"},
              "cookies": {"type": "object"},
              "body": {"type": "string"},
              "loggedDate": {"type": "number"},
              "loggedDateString": {"type": "string"}
            }
          },
          "ServeEvent": {
            "type": "object",
            "required": ["id", "request"],
            "properties": {
              "id": {"type": "string"},
              "request": {"$ref": "#/components/schemas/LoggedRequest"},
              "stubMapping": {"type": "object"},
              "responseDefinition": {"type": "object"},
              "wasMatched": {"type": "boolean"},
              "session": {"type": "string", "description": "The session the request named, if any"}
            }
          },
          "Requests": {
            "type": "object",
            "required": ["requests"],
            "properties": {
              "requests": {"type": "array", "items": {"$ref": "#/components/schemas/LoggedRequest"}}
            }
          },
          "NearMisses": {
            "type": "object",
            "required": ["nearMisses"],
            "properties": {
              "nearMisses": {
                "type": "array",
                "items": {
                  "type": "object",
                  "required": ["request", "matchResult"],
                  "properties": {
                    "request": {"type": "object"},
                    "stubMapping": {"type": "object"},
                    "requestPattern": {"type": "object"},
                    "matchResult": {
                      "type": "object",
                      "required": ["distance"],
                      "properties": {"distance": {"type": "number", "minimum": 0, "maximum": 1}}
                    },
                    "mismatches": {
                      "type": "array",
                      "items": {
                        "type": "object",
                        "properties": {
                          "part": {"type": "string"},
                          "expected": {"type": "string"},
                          "actual": {"type": "string"}
                        }
                      }
                    }
                  }
                }
              }
            }
          },
          "StateContext": {
            "type": "object",
            "required": ["contextName", "properties", "list", "updateCount"],
            "properties": {
              "contextName": {"type": "string"},
              "properties": {"type": "object", "additionalProperties": {"type": "string"}},
              "list": {
                "type": "array",
                "items": {"type": "object", "additionalProperties": {"type": "string"}}
              },
              "updateCount": {"type": "integer", "minimum": 1}
            }
          },
          "Scenario": {
            "type": "object",
            "required": ["name", "state"],
            "properties": {
              "id": {"type": "string"},
              "name": {"type": "string"},
              "state": {"type": "string"},
              "possibleStates": {"type": "array", "items": {"type": "string"}}
            }
          },
          "SettingsEnvelope": {
            "type": "object",
            "required": ["settings"],
            "properties": {
              "settings": {
                "type": "object",
                "required": ["fixedDelay"],
                "properties": {
                  "fixedDelay": {"type": "integer", "minimum": 0},
                  "delayDistribution": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {
                      "type": {"type": "string", "enum": ["fixed", "uniform", "lognormal"]}
                    }
                  },
                  "extended": {"type": "object"}
                }
              }
            }
          }
        }
      }
    }
    """#
}

/// The admin API's OpenAPI document as served at `/__admin/openapi.json`, for checks outside the server
/// (MockServerCLI's `AdminResponseCheck`).
package enum AdminAPIDocument {
  /// The document's JSON text.
  package static var text: String { AdminAPI.openAPIText }
}
