import type { NetworkClient } from './network-client';

export interface ViewerSummary {
  userDid: string;
  vasps: string[];
}

/** Network calls about who we are and which VASPs we may act for. */
export function directoryActivities(network: NetworkClient) {
  return {
    /** Reads `GET /auth/viewer`: proves the credentials work and lists the VASPs they control. */
    async fetchViewer(): Promise<ViewerSummary> {
      const viewer = await network.call('GET /auth/viewer', () =>
        network.api.get('auth/viewer').json<{ did: string; vasps?: string[] }>(),
      );
      return { userDid: viewer.did, vasps: viewer.vasps ?? [] };
    },
  };
}
