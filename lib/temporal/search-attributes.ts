import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes: what operators filter on in the Temporal UI. Registered on the dev server at start
 * (`--search-attribute`) and by the schema job in production (see docker-compose.yml).
 */
export const TransferStatus = defineSearchAttributeKey('TransferStatus', SearchAttributeType.KEYWORD);
export const SubsidiaryVaspDid = defineSearchAttributeKey('SubsidiaryVaspDid', SearchAttributeType.KEYWORD);
export const VaspDid = defineSearchAttributeKey('VaspDid', SearchAttributeType.KEYWORD);
export const Asset = defineSearchAttributeKey('Asset', SearchAttributeType.KEYWORD);
export const NeedsReview = defineSearchAttributeKey('NeedsReview', SearchAttributeType.BOOL);

export const ALL_SEARCH_ATTRIBUTES = [TransferStatus, SubsidiaryVaspDid, VaspDid, Asset, NeedsReview];

/** `Name=Type` pairs in the form `temporal server start-dev --search-attribute` and `temporal operator` take. */
export const searchAttributeCliArgs = (): string[] =>
  ALL_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${cliType(k.type)}`]);

function cliType(t: SearchAttributeType): string {
  switch (t) {
    case SearchAttributeType.KEYWORD:
      return 'Keyword';
    case SearchAttributeType.BOOL:
      return 'Bool';
    case SearchAttributeType.TEXT:
      return 'Text';
    case SearchAttributeType.INT:
      return 'Int';
    case SearchAttributeType.DOUBLE:
      return 'Double';
    case SearchAttributeType.DATETIME:
      return 'Datetime';
    case SearchAttributeType.KEYWORD_LIST:
      return 'KeywordList';
  }
}
