package service

func (s *Service) externalAccountRoutes() []route {
	return []route{}
}
