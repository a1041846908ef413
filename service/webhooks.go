package service

func (s *Service) webhookRoutes() []route {
	return []route{}
}
