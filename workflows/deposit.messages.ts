import { defineQuery } from '@temporalio/workflow';
import type { DepositState } from '../deposits/types';

/** The deposit workflow's messages, shared by the workflow and its callers. */

export type { DepositInput, DepositState } from '../deposits/types';

export const depositStateQuery = defineQuery<DepositState>('depositState');
