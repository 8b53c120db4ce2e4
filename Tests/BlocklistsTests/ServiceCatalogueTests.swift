import DomainMatch
import Foundation
import Policy
import SystemIO
import Testing

@testable import Blocklists

/// The shipped service catalogue (docs/services.md#the-catalogue): at least forty apps,
/// each with bundle ids, a domain and a source; names as the matcher normalises them; no
/// domain — nor a domain under another's — in two services unless both list it as shared.
@Suite struct ServiceCatalogueTests {
    static let folder = ListFolderTests.checkout.appendingPathComponent("blocklists").path

    @Test func theShippedCatalogueLoadsAndKeepsItsRules() throws {
        let loaded = ServiceFile.load(folder: Self.folder)
        #expect(loaded.warning == nil, "\(loaded.warning ?? "")")
        let catalogue = loaded.catalogue
        #expect(catalogue.services.count >= 40)
        #expect(Set(catalogue.services.map(\.kind)) == Set(ServiceCatalogue.Kind.allCases))
        var owners: [DomainName: [(id: String, shared: Bool)]] = [:]
        for service in catalogue.services {
            #expect(!service.bundleIDs.isEmpty && !service.domains.isEmpty && !service.source.isEmpty, "\(service.id)")
            for domain in service.domains {
                #expect(try QueryName.parse(domain.description) == domain, "\(domain) is normalised")
                owners[domain, default: []].append((service.id, service.sharedDomains.contains(domain)))
            }
            for bundle in service.bundleIDs {
                #expect(catalogue.service(forBundle: bundle).map { catalogue.services[$0].id } == service.id)
            }
        }
        for (domain, list) in owners {
            // The domain itself, and every parent of it, owned by another service.
            for labels in 1...domain.labelCount {
                for other in owners[domain.suffix(labels: labels)] ?? [] {
                    // Allowed when the deeper name is listed, and marked shared, in both.
                    for mine in list where mine.id != other.id {
                        #expect(
                            mine.shared && list.contains { $0.id == other.id && $0.shared },
                            "\(domain) (\(mine.id)) overlaps \(domain.suffix(labels: labels)) (\(other.id))")
                    }
                }
            }
        }
        // Every name of a service is matched to it (or to a service that shares it).
        for service in catalogue.services {
            for domain in service.domains {
                let matched = catalogue.match(try QueryName.parse("x." + domain.description))
                let id = matched.map { catalogue.services[$0.service].id }
                #expect(id == service.id || service.sharedDomains.contains(domain), "x.\(domain) → \(id ?? "none")")
            }
        }
    }
}
