/** The sender of each target kind. */

import type { TargetKind } from '../schemas.js';
import { discordSender } from './discord.js';
import { emailSender } from './email.js';
import type { TargetSender } from './kind.js';
import { ntfySender } from './ntfy.js';
import { telegramSender } from './telegram.js';
import { webhookSender } from './webhook.js';

export const SENDERS: Record<TargetKind, TargetSender> = {
  webhook: webhookSender,
  ntfy: ntfySender,
  discord: discordSender,
  telegram: telegramSender,
  email: emailSender,
};
